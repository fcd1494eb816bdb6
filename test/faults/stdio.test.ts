/**
 * Fault injection over stdio, with real processes: each promise of the reliability issue is broken on purpose.
 * Re-sends, reconnect waits, timeouts, OVERLOADED and cancellation are in test/contracts/failures.contract.test.ts,
 * which runs them on every transport and in both protocol eras.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MCPServerConfigInput } from '../../src/config/servers.js';
import type { MCPManagerEvents } from '../../src/interop/events.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/fixtures.js';
import { isAlive, waitForExit } from '../helpers/processes.js';

/** A temporary directory; `await using` removes it. */
function tempDir(): AsyncDisposable & { path: string } {
  const path = mkdtempSync(join(tmpdir(), 'interlock-faults-'));
  return { path, [Symbol.asyncDispose]: async () => rmSync(path, { recursive: true, force: true }) };
}

function newManager(): MCPClientManager {
  return new MCPClientManager({ capabilities: CapabilitySet.allowAll({ onWarning: () => {} }) });
}

const fast = { initialDelayMs: 20, maxDelayMs: 200 };
function faulty(extra: Partial<MCPServerConfigInput> & Record<string, unknown> = {}): MCPServerConfigInput {
  return {
    name: 'faulty',
    transport: 'stdio',
    ...nodeFixture('faulty'),
    reconnect: fast,
    ...extra,
  } as MCPServerConfigInput;
}

function once<K extends keyof MCPManagerEvents & string>(
  manager: MCPClientManager,
  event: K,
): Promise<MCPManagerEvents[K]> {
  return new Promise((resolve) => manager.once(event, resolve));
}

describe('a server that cannot come back', () => {
  it('goes to failed after maxAttempts, fails calls at once with NOT_CONNECTED, and reconnectServer recovers it', async () => {
    await using dir = tempDir();
    const failFile = join(dir.path, 'fail');
    await using manager = newManager();
    await manager.connectServer(
      faulty({
        env: { FAULTY_FAIL_START_FILE: failFile },
        reconnect: { maxAttempts: 2, initialDelayMs: 10, maxDelayMs: 20 },
      }),
    );
    const attempts: number[] = [];
    manager.on('reconnecting', (e) => attempts.push(e.attempt));
    const failed = once(manager, 'failed');
    writeFileSync(failFile, 'x');
    process.kill(manager.getConnection('faulty')?.pid as number, 'SIGKILL');
    const { error } = await failed;
    expect(attempts).toEqual([1, 2]);
    expect(error.message).toMatch(/exited with code 3|refusing to start/);
    expect(manager.getConnection('faulty')?.state).toBe('failed');

    const started = performance.now();
    const err = await manager.executeTool('mcp__faulty__echo', { text: 'x' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'NOT_CONNECTED' });
    expect((err as Error).message).toMatch(/failed/);
    expect(performance.now() - started).toBeLessThan(2_000);

    rmSync(failFile);
    await expect(manager.reconnectServer('faulty')).resolves.toBe(true);
    await expect(manager.executeTool('mcp__faulty__echo', { text: 'back' })).resolves.toBe('back');
  });

  it('does not reconnect at all when reconnect is disabled', async () => {
    await using manager = newManager();
    await manager.connectServer(faulty({ reconnect: { enabled: false } }));
    const failed = once(manager, 'failed');
    process.kill(manager.getConnection('faulty')?.pid as number, 'SIGKILL');
    await failed;
    expect(manager.getConnection('faulty')?.state).toBe('failed');
    expect(manager.getConnection('faulty')?.error?.message).toMatch(/SIGKILL/);
  });
});

describe('a server that writes what it should not', () => {
  it('reports and skips garbage and partial lines on stdout', async () => {
    await using manager = newManager();
    const warnings: string[] = [];
    manager.on('warning', (w) => warnings.push(w.code));
    await manager.connectServer(faulty({ env: { FAULTY_GARBAGE: '1' } }));
    await expect(manager.executeTool('mcp__faulty__echo', { text: 'clean' })).resolves.toBe('clean');
    expect(warnings).toContain('STDOUT_GARBAGE');
  });

  it('fails the connect at once, quoting the line with secrets masked, when a server writes to stdout what is not MCP', {
    timeout: 20_000,
  }, async () => {
    // A server started in HTTP mode by mistake: a banner on stdout, then it waits for something else. The
    // connect timeout is a minute; the test's 20 s can only pass if the connect fails fast.
    const banner =
      "process.stdout.write('Listening on http://localhost:8000 (pid ' + process.pid + ', key ' + process.env.API_KEY + ')\\n'); setInterval(() => {}, 1000);";
    await using manager = newManager();
    const err = (await manager
      .connectServer({
        name: 'http_mode',
        transport: 'stdio',
        command: process.execPath,
        args: ['-e', banner],
        env: { API_KEY: 'sk-live-0123456789abcdef' },
        connectTimeoutMs: 60_000,
        reconnect: { enabled: false },
      })
      .catch((e: unknown) => e)) as Error;
    expect(err).toMatchObject({ code: 'CONNECTION_FAILED' });
    expect(err.message).toMatch(
      /^Server 'http_mode' failed to connect: it wrote a line to stdout that is not an MCP message, and no MCP message followed within 3000 ms: "Listening on http:\/\/localhost:8000 \(pid \d+, key \*\*\*\)"\. A stdio server must write only JSON-RPC messages to stdout/,
    );
    expect(err.message).not.toContain('sk-live');
    const pid = Number(/\(pid (\d+)/.exec(err.message)?.[1]);
    expect(await waitForExit(pid, 5_000)).toBe(true);
  });

  it('after connect, reports the first garbage lines and then one notice, not a warning per line', async () => {
    await using manager = newManager();
    const warnings: string[] = [];
    manager.on('warning', (w) => {
      if (w.code === 'STDOUT_GARBAGE') warnings.push(w.message);
    });
    await manager.connectServer(faulty({ env: { FAULTY_GARBAGE: '1' } }));
    // Each answer comes with two garbage lines: 8 calls, 16 lines.
    for (let i = 0; i < 8; i++) {
      await expect(manager.executeTool('mcp__faulty__echo', { text: `n${i}` })).resolves.toBe(`n${i}`);
    }
    expect(warnings).toHaveLength(6);
    expect(warnings[0]).toContain(
      'skipped a stdout line that is not a JSON-RPC message: "this is a log line, not JSON"',
    );
    expect(warnings[5]).toContain('they are skipped without further warnings');
  });

  it('fails the server, and the call in flight, when one line exceeds maxMessageBytes', async () => {
    await using manager = newManager();
    await manager.connectServer(
      faulty({
        maxMessageBytes: 1024 * 1024,
        reconnect: { enabled: false },
        env: { FAULTY_BIG_LINE_BYTES: String(3 * 1024 * 1024) },
      }),
    );
    const failed = once(manager, 'failed');
    // The fixture answers this call with a 3 MB line that never ends: the call triggers it, not a timer (issue 39).
    const call = manager.executeTool('mcp__faulty__echo', { text: 'hi' }).catch((err: unknown) => err);
    expect((await failed).server).toBe('faulty');
    expect(manager.getConnection('faulty')?.state).toBe('failed');
    expect(String(await call)).toContain("Connection to server 'faulty' was lost during the call");
  });

  it('carries a 50 MB result through under a raised maxMessageBytes and cuts it to maxResultChars', async () => {
    await using manager = newManager();
    // Over the default limit (the SDK's 10 MiB, issue 43): a server whose results are this large is given room.
    await manager.connectServer(faulty({ maxMessageBytes: 64 * 1024 * 1024 }));
    const text = await manager.executeTool('mcp__faulty__big', { mb: 50 });
    expect(text.length).toBeLessThan(101_000);
    expect(text).toMatch(/truncated/);
  });
});

describe('process hygiene', () => {
  it('ends a grandchild the server spawned when the server is closed', async () => {
    await using manager = newManager();
    await manager.connectServer(faulty());
    const server = manager.getConnection('faulty')?.pid as number;
    const grandchild = Number(await manager.executeTool('mcp__faulty__spawn_grandchild', {}));
    expect(isAlive(grandchild)).toBe(true);
    await manager.disconnectServer('faulty');
    expect(await waitForExit(server, 5_000)).toBe(true);
    expect(await waitForExit(grandchild, 5_000)).toBe(true);
  });

  it('includes the exit code and the last stderr lines when the server exits at start', async () => {
    await using manager = newManager();
    await using dir = tempDir();
    const failFile = join(dir.path, 'fail');
    writeFileSync(failFile, 'x');
    const result = await manager.connectAll([
      faulty({ env: { FAULTY_FAIL_START_FILE: failFile, FAULTY_STDERR: 'db: permission denied' } }),
    ]);
    expect(result.faulty).toBe(false);
    const message = manager.getConnection('faulty')?.error?.message ?? '';
    expect(message).toMatch(/exited with code 3/);
    expect(message).toContain('db: permission denied');
  });
});

describe('resources and prompts during a reconnect', () => {
  it('wait for the server like tool calls do, instead of failing at once', async () => {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp-resource:echo:**', 'read');
    await using manager = new MCPClientManager({ capabilities });
    await manager.connectServer({
      name: 'echo',
      transport: 'stdio',
      ...nodeFixture('echo'),
      reconnect: { initialDelayMs: 300, maxDelayMs: 300, jitter: 'none' },
    });
    const reconnecting = once(manager, 'reconnecting');
    process.kill(manager.getConnection('echo')?.pid as number, 'SIGKILL');
    await reconnecting;
    const result = await manager.readResource('echo', 'fixture://greeting');
    expect(result.contents[0]).toMatchObject({ uri: 'fixture://greeting' });
    await expect(manager.readResource('nowhere', 'fixture://x')).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
    });
  });
});
