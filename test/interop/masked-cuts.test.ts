/**
 * Issue 38: a secret split by a length cut escaped masking. Every text that is both masked and cut is masked first:
 * a stderr line cut at 16,384 characters, a stdout line quoted at 200, a server log message cut at 2,000 and an
 * HTTP error body cut at 64 KiB, each with a 32-character secret straddling the cut (30 characters before it).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import type { ServerLogEntry } from '../../src/interop/server-logs.js';
import { createHttpClient } from '../../src/net/http.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/fixtures.js';
import { closesAfterEach } from '../remote/cleanup.js';
import { startHttp } from '../remote/net-fixtures.js';

const SECRET = 'sk_live_0123456789abcdefghijklmn';
/** What a reader could use: the part of the secret before each cut. */
const HEAD = SECRET.slice(0, 30);

const track = closesAfterEach();
let manager: MCPClientManager | undefined;
afterEach(async () => {
  await manager?.close();
  manager = undefined;
});

/** A manager whose logger and events are all written down, as one text. */
function recordingManager(options: ConstructorParameters<typeof MCPClientManager>[0] = {}) {
  const seen: string[] = [];
  const log = (message: string) => seen.push(message);
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:srv:*', 'execute');
  manager = new MCPClientManager({
    capabilities,
    logger: { debug: log, info: log, warn: log, error: log },
    ...options,
  });
  manager.on('warning', (w) => seen.push(w.message));
  return { manager, seen };
}

/** An error's messages and causes, as one text. */
function chainText(err: unknown): string {
  const parts: string[] = [];
  for (let e = err, depth = 0; e !== undefined && depth < 20; depth++) {
    if (!(e instanceof Error)) {
      parts.push(String(e));
      break;
    }
    parts.push(e.message, String(e.stack));
    e = e.cause;
  }
  return parts.join('\n');
}

/** Connects a stdio server that runs `script` with the secret in its environment; resolves with the connect error. */
function connectScript(manager: MCPClientManager, name: string, script: string): Promise<unknown> {
  return manager
    .connectServer({
      name,
      transport: 'stdio',
      command: process.execPath,
      args: ['-e', script],
      env: { API_TOKEN: SECRET },
      reconnect: { enabled: false },
    })
    .catch((e: unknown) => e);
}

describe('a secret across a cut is masked, not cut in two', () => {
  it('in a stderr line cut at 16,384 characters', async () => {
    const { manager, seen } = recordingManager();
    // One line with no end: 30 characters of the secret before the cut, the rest after it.
    const script = `process.stderr.write('x'.repeat(16384 - 30) + process.env.API_TOKEN + 'y'.repeat(40000)); process.exit(1)`;
    const err = await connectScript(manager, 'noisy', script);
    expect(err).toBeInstanceOf(Error);
    const cutLine = seen.find((line) => line.startsWith('[noisy stderr] xxx'));
    expect(cutLine).toMatch(/x\*\*\*y+… \[\d+ more characters cut\]$/);
    expect([...seen, chainText(err)].join('\n')).not.toContain(HEAD);
  });

  it('in a stdout line quoted at 200 characters', async () => {
    const { manager, seen } = recordingManager();
    const script = `console.log('x'.repeat(200 - 30) + process.env.API_TOKEN + 'y'.repeat(100)); setInterval(() => {}, 1000)`;
    const err = await connectScript(manager, 'chatty', script);
    expect(chainText(err)).toMatch(/that is not an MCP message.*x\*\*\*y+…/);
    expect([...seen, chainText(err)].join('\n')).not.toContain(HEAD);
  });

  it('in a server log message cut at 2,000 characters', async () => {
    const { manager, seen } = recordingManager({ logLevel: 'info' });
    const entries: ServerLogEntry[] = [];
    manager.on('server_log', (entry) => entries.push(entry));
    await manager.connectServer({
      name: 'srv',
      transport: 'stdio',
      ...nodeFixture('modern'),
      env: { API_TOKEN: SECRET },
    });
    await expect(
      manager.executeTool('mcp__srv__log_env', { name: 'API_TOKEN', pad: 2000 - 30 }),
    ).resolves.toBe('logged');
    expect(entries.map((e) => e.text)).toEqual([
      expect.stringMatching(/^x{1970}\*\*\*y{27}… \[73 more characters cut\]$/),
    ]);
    expect([...seen, ...entries.map((e) => e.text)].join('\n')).not.toContain(HEAD);
  });

  it('in an HTTP error body cut at 64 KiB', async () => {
    const body = `${'x'.repeat(64 * 1024 - 30)}${SECRET} ${'y'.repeat(1000)}`;
    const server = track(
      await startHttp((req: IncomingMessage, res: ServerResponse) => {
        req.resume();
        res.writeHead(500, { 'content-type': 'text/plain' }).end(body);
      }),
    );
    const http = track(createHttpClient({ network: { allowHosts: ['127.0.0.1'] }, http: { proxy: 'none' } }));
    const res = await http.fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRET}` },
      body: '{}',
    });
    const text = await res.text();
    expect(res.status).toBe(500);
    expect(text).toMatch(/x\*\*\* y+$/);
    expect(text).not.toContain(HEAD);
  });
});
