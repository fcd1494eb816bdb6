/**
 * Tools that answer with a task handle (issue 13), on both protocol eras: the tasks extension
 * `io.modelcontextprotocol/tasks` on a 2026-07-28 server (tasks-modern: the v2 server package, the extension's
 * methods served by the fixture), and the tasks utility of 2025-11-25 (tasks-legacy: SDK 1.32's task store). The
 * caller holds one promise: polled at the server's interval, progress per status change, `tasks/cancel` on abort
 * and timeout, input answered through the same gate as any server request.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { MCPServerConfigInput } from '../../src/config/servers.js';
import { isInterlockError, type ServerRequestError } from '../../src/errors.js';
import { MCPClientManager, type MCPClientManagerOptions } from '../../src/interop/manager.js';
import { MAX_TASK_INPUT_REQUESTS } from '../../src/interop/tasks.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { startModernHttp } from '../helpers/http-fixtures.js';
import { isAlive, nodeFixture, waitForExit } from '../helpers/index.js';
import { recordSpans } from '../helpers/otel.js';

interface Era {
  era: string;
  transport: 'stdio' | 'http';
  fixture: 'tasks-modern' | 'tasks-legacy';
  /** How a failed task reaches the caller: the extension carries the JSON-RPC error, SDK 1.32 a tool error. */
  failed: 'thrown' | 'tool error';
}

const eras: Era[] = [
  { era: '2026-07-28', transport: 'stdio', fixture: 'tasks-modern', failed: 'thrown' },
  // Over HTTP the SDK routes tasks/* with the Mcp-Name header, and every request meets a fresh server instance.
  { era: '2026-07-28', transport: 'http', fixture: 'tasks-modern', failed: 'thrown' },
  { era: '2025-11-25', transport: 'stdio', fixture: 'tasks-legacy', failed: 'tool error' },
];

/** The server config for `era`, starting its HTTP server first when it has one. */
async function startServer(era: Era): Promise<{ config: MCPServerConfigInput; close: () => Promise<void> }> {
  if (era.transport === 'stdio') {
    return {
      config: { name: 'srv', transport: 'stdio', ...nodeFixture(era.fixture) },
      close: async () => {},
    };
  }
  const server = await startModernHttp({ fixture: 'tasks-modern' });
  return { config: { name: 'srv', transport: 'http', url: server.mcpUrl }, close: () => server.close() };
}

/** What a call ended with: its text, or the code and message it was rejected with. */
async function outcome(call: Promise<{ text: string; isError: boolean }>) {
  try {
    const result = await call;
    return { text: result.text, isError: result.isError };
  } catch (err) {
    if (!isInterlockError(err)) throw err;
    return { code: err.code, message: err.message, error: err };
  }
}

describe.each(eras)('tasks on protocol $era over $transport', (era) => {
  let manager: MCPClientManager | undefined;
  let stopServer: (() => Promise<void>) | undefined;
  const asked: string[] = [];

  async function connect(grants: ('elicitation' | 'sampling')[] = [], extra: MCPClientManagerOptions = {}) {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:srv:*', 'execute');
    for (const kind of grants) capabilities.grant(`mcp:srv:${kind}`, 'request');
    const audit = new MemoryAuditSink();
    manager = new MCPClientManager({
      capabilities,
      audit,
      onElicitation: (request) => {
        asked.push(`elicitation: ${request.message}`);
        return { action: 'accept', content: { ok: true } };
      },
      onSampling: () => {
        asked.push('sampling');
        return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'old pond' } };
      },
      ...extra,
    });
    const server = await startServer(era);
    stopServer = server.close;
    await manager.connectServer(server.config);
    return { manager, audit };
  }

  /** The task ids the server got tasks/cancel for. */
  async function cancelledOnServer(m: MCPClientManager): Promise<string[]> {
    return JSON.parse(await m.executeTool('mcp__srv__cancelled', {})).cancelled;
  }

  afterEach(async () => {
    await manager?.close();
    await stopServer?.();
    manager = undefined;
    stopServer = undefined;
    asked.length = 0;
  });

  it('resolves the one promise of callTool to the final result of the task', async () => {
    const { manager: m } = await connect();
    expect(m.getConnection('srv')?.protocolVersion).toBe(era.era);
    const result = await m.callTool('mcp__srv__slow', { polls: 3 });
    expect(result.isError).toBe(false);
    expect(result.text).toMatch(/^done after 3 polls/);
  });

  it('reports each status change of the task as progress, in order', async () => {
    const { manager: m } = await connect();
    const seen: { progress: number; message?: string | undefined }[] = [];
    await m.callTool('mcp__srv__slow', { polls: 3 }, { onProgress: (p) => seen.push(p) });
    const messages = seen.map((p) => p.message);
    expect(messages).toContain('working: step 1 of 3');
    expect(messages).toContain('working: step 2 of 3');
    expect(messages.at(-1)).toMatch(/^completed/);
    expect(seen.map((p) => p.progress)).toEqual(seen.map((_, i) => i + 1));
  });

  it("waits at least the server's poll interval between two polls", async () => {
    const { manager: m } = await connect();
    const text = await m.executeTool('mcp__srv__slow', { polls: 3, interval: 60 });
    const gap = Number(/shortest gap (-?\d+) ms/.exec(text)?.[1]);
    // A lower bound only: a timer never fires early by more than a millisecond or so, however busy the machine.
    expect(gap).toBeGreaterThanOrEqual(55);
  });

  it('sends tasks/cancel when the caller aborts, and rejects with REQUEST_CANCELLED', async () => {
    const { manager: m } = await connect();
    const controller = new AbortController();
    const ended = await outcome(
      m.callTool(
        'mcp__srv__forever',
        {},
        { signal: controller.signal, onProgress: () => controller.abort() },
      ),
    );
    expect(ended.code).toBe('REQUEST_CANCELLED');
    const cancelled = await cancelledOnServer(m);
    expect(cancelled).toHaveLength(1);
    expect(ended.message).toContain(cancelled[0]);
  });

  it('ends a task that never changes with REQUEST_TIMEOUT after timeoutMs, and cancels it', async () => {
    const { manager: m } = await connect();
    const ended = await outcome(m.callTool('mcp__srv__forever', {}, { timeoutMs: 300 }));
    expect(ended.code).toBe('REQUEST_TIMEOUT');
    expect(ended.message).toMatch(/no status change for 300 ms \(timeoutMs\)/);
    expect(await cancelledOnServer(m)).toHaveLength(1);
  });

  it('ends a task that keeps reporting progress at maxTotalTimeoutMs, and cancels it', async () => {
    const { manager: m } = await connect();
    const ended = await outcome(
      m.callTool('mcp__srv__slow', { polls: 100_000 }, { timeoutMs: 5000, maxTotalTimeoutMs: 400 }),
    );
    expect(ended.code).toBe('REQUEST_TIMEOUT');
    expect(ended.message).toContain('maxTotalTimeoutMs 400 ms');
    expect(await cancelledOnServer(m)).toHaveLength(1);
  });

  it('turns a failed task into a clear tool error, and sends no tasks/cancel for it', async () => {
    const { manager: m } = await connect();
    const ended = await outcome(m.callTool('mcp__srv__broken', {}));
    if (era.failed === 'thrown') {
      expect(ended.code).toBe('SERVER_ERROR');
      expect((ended.error as ServerRequestError).rpcCode).toBe(-32603);
      expect(ended.message).toMatch(/mcp__srv__broken.*failed: API rate limit exceeded \(JSON-RPC -32603\)/);
    } else {
      expect(ended).toEqual({ text: 'Error: API rate limit exceeded', isError: true });
    }
    expect(await cancelledOnServer(m)).toEqual([]);
  });

  it('answers input the task asks for through the handler when the policy allows it', async () => {
    const { manager: m, audit } = await connect(['elicitation']);
    const text = await m.executeTool('mcp__srv__confirm', {});
    expect(text).toContain('"action":"accept"');
    // SEP-1034: the schema's default fills the field the answer left out, as for any elicitation.
    expect(text).toContain('"note":"none"');
    expect(asked).toEqual(['elicitation: Deploy to production?']);
    const records = audit.records.filter((r) => r.action === 'request');
    expect(records.map((r) => ({ resource: r.resource, allowed: r.allowed }))).toEqual([
      { resource: 'mcp:srv:elicitation', allowed: true },
    ]);
  });

  it('declines input the policy does not allow, without asking the handler', async () => {
    const { manager: m, audit } = await connect([]);
    const text = await m.executeTool('mcp__srv__confirm', {});
    expect(text).toContain('"action":"decline"');
    expect(asked).toEqual([]);
    const records = audit.records.filter((r) => r.action === 'request');
    expect(records.map((r) => ({ resource: r.resource, allowed: r.allowed }))).toEqual([
      { resource: 'mcp:srv:elicitation', allowed: false },
    ]);
  });

  it('ends the call when the input handler throws, and keeps the connection', async () => {
    const { manager: m } = await connect(['elicitation'], {
      onElicitation: () => {
        throw new Error('the form could not be shown');
      },
    });
    const ended = await outcome(m.callTool('mcp__srv__confirm', {}));
    if (era.era === '2026-07-28') {
      expect(ended.code).toBe('REQUEST_CANCELLED');
      expect(ended.message).toContain('the form could not be shown');
      expect(await cancelledOnServer(m)).toHaveLength(1);
    } else {
      // 2025-11-25: the server got a JSON-RPC error for its elicitation, and its task failed with it.
      expect(ended).toMatchObject({
        isError: true,
        text: expect.stringMatching(/confirm failed: .*the form could not be shown/),
      });
    }
    expect(m.getConnection('srv')?.state).toBe('ready');
  });

  it('rejects a call following a task at once when the manager closes, and leaves no process', async () => {
    const { manager: m } = await connect();
    // Over HTTP the manager owns no process; the call must still end.
    const pid = m.getConnection('srv')?.pid;
    let started!: () => void;
    const polling = new Promise<void>((resolve) => {
      started = resolve;
    });
    const call = outcome(m.callTool('mcp__srv__forever', {}, { onProgress: () => started() }));
    await polling;
    await m.close();
    const ended = await call;
    expect(ended.code).toMatch(/^(CONNECTION_LOST|CLOSED|NOT_CONNECTED)$/);
    if (pid !== undefined) {
      expect(await waitForExit(pid)).toBe(true);
      expect(isAlive(pid)).toBe(false);
    }
  });
});

describe('the tasks extension on protocol 2026-07-28', () => {
  let manager: MCPClientManager | undefined;
  afterEach(async () => {
    await manager?.close();
    manager = undefined;
  });

  async function connect(grants: string[]) {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:srv:*', 'execute');
    for (const resource of grants) capabilities.grant(resource, 'request');
    const asked: string[] = [];
    manager = new MCPClientManager({
      capabilities,
      onElicitation: () => ({ action: 'accept', content: {} }),
      onSampling: () => {
        asked.push('sampling');
        return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'old pond' } };
      },
    });
    await manager.connectServer({ name: 'srv', transport: 'stdio', ...nodeFixture('tasks-modern') });
    return { manager, asked };
  }

  it('declares the extension, so the server answers with a task', async () => {
    const { manager: m } = await connect([]);
    // The fixture refuses to create a task (-32021) for a request that does not declare the extension.
    await expect(m.executeTool('mcp__srv__slow', { polls: 1 })).resolves.toMatch(/^done after 1 polls/);
  });

  it('samples for a task when allowed', async () => {
    const { manager: m, asked } = await connect(['mcp:srv:sampling']);
    await expect(m.executeTool('mcp__srv__sample', {})).resolves.toContain('old pond');
    expect(asked).toEqual(['sampling']);
  });

  it('fails a task whose sampling the policy refuses with CAPABILITY_DENIED, and cancels it', async () => {
    const { manager: m, asked } = await connect([]);
    const ended = await outcome(m.callTool('mcp__srv__sample', {}));
    expect(ended.code).toBe('CAPABILITY_DENIED');
    expect(ended.message).toContain('mcp:srv:sampling');
    expect(asked).toEqual([]);
    expect(JSON.parse(await m.executeTool('mcp__srv__cancelled', {})).cancelled).toHaveLength(1);
  });

  it("checks the final result of a task against the tool's outputSchema, not the handle", async () => {
    const { manager: m } = await connect([]);
    await expect(m.callTool('mcp__srv__typed', { temp: 21 })).resolves.toMatchObject({
      structuredContent: { temp: 21 },
    });
    const ended = await outcome(m.callTool('mcp__srv__typed', { temp: 'hot' }));
    expect(ended.code).toBe('INVALID_TOOL_OUTPUT');
    expect(ended.message).toContain('temp');
  });

  it('cuts off a task that keeps asking new questions, and cancels it', async () => {
    const { manager: m } = await connect(['mcp:srv:elicitation']);
    const ended = await outcome(m.callTool('mcp__srv__endless', { interval: 1 }));
    expect(ended.code).toBe('SERVER_ERROR');
    expect(ended.message).toContain(`more than ${MAX_TASK_INPUT_REQUESTS} input requests`);
    expect(JSON.parse(await m.executeTool('mcp__srv__cancelled', {})).cancelled).toHaveLength(1);
  });

  it('reports a task handle without a task id as an unusable answer, without polling', async () => {
    const { manager: m } = await connect([]);
    const ended = await outcome(m.callTool('mcp__srv__junk', {}));
    expect(ended.code).toBe('SERVER_ERROR');
    expect(ended.message).toContain('unreadable task handle');
  });

  it("records each status of the task on the call's tools/call span", async () => {
    const otel = recordSpans();
    try {
      const capabilities = new CapabilitySet();
      capabilities.grant('mcp:srv:*', 'execute');
      manager = new MCPClientManager({ capabilities, tracer: otel.tracer });
      await manager.connectServer({ name: 'srv', transport: 'stdio', ...nodeFixture('tasks-modern') });
      await manager.executeTool('mcp__srv__slow', { polls: 2 });
      const span = otel.spans().find((s) => s.name === 'tools/call slow');
      const statuses = span?.events
        .filter((e) => e.name === 'interlock.task.status')
        .map((e) => e.attributes?.['interlock.task.status']);
      expect(statuses?.[0]).toBe('working');
      expect(statuses?.at(-1)).toBe('completed');
    } finally {
      await manager?.close();
      manager = undefined;
      await otel.close();
    }
  });

  it('ignores a task handle a server puts in a plain result: only the client marks one', async () => {
    const { manager: m } = await connect([]);
    const result = await m.callTool('mcp__srv__forge', {});
    expect(result).toMatchObject({ text: 'plain result', isError: false });
  });
});

describe.each(['tasks-modern', 'tasks-legacy'])('an app following tasks of %s', (fixture) => {
  it('exits on its own once its manager is closed: no timer, socket or process is left', {
    timeout: 60_000,
  }, async () => {
    const app = fileURLToPath(new URL('../fixtures/task-app.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', app, fixture], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    const [exitCode] = (await once(child, 'exit')) as [number | null];
    expect(exitCode).toBe(0);
    expect(JSON.parse(out)).toEqual({
      done: expect.stringMatching(/^done after 2 polls/),
      aborted: 'REQUEST_CANCELLED',
      timedOut: 'REQUEST_TIMEOUT',
    });
  });
});
