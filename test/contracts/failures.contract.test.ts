/**
 * Failure contracts (issue 15): what Interlock promises when a server or its connection fails, written once and run
 * against every transport (stdio, legacy SSE, Streamable HTTP) in both protocol eras — 2026-07-28 (the `modern`
 * fixture, SDK v2 server package) and 2025-11-25 (the `echo` fixture, SDK 1.x). A cell that cannot apply is a
 * named skip that says why, as hono runs one router suite against every router.
 *
 * Every server is a real process with FIXTURE_LOG set, so a test waits on what the server received (a "got the
 * request" signal) instead of sleeping, and counts how often a call reached it.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  MCPClientManager,
  type MCPManagerEvents,
  type MCPServerConfigInput,
} from '../../src/interop/index.js';
import { CapabilitySet } from '../../src/security/index.js';
import { createFixtureLog, type FixtureLog, type FixtureLogEntry, nodeFixture } from '../helpers/fixtures.js';
import { type HttpServerProcess, startHttpFixture, startModernHttp } from '../helpers/http-fixtures.js';
import { CONDITION_TIMEOUT_MS } from '../helpers/wait.js';

type Transport = 'stdio' | 'sse' | 'http';
type Era = '2026-07-28' | '2025-11-25';

/** The behaviours of this file; a cell names the ones it skips. */
type Behaviour =
  | 'resend-never-sent'
  | 'resend-idempotent'
  | 'no-resend'
  | 'reconnect-wait'
  | 'timeout'
  | 'progress-reset'
  | 'max-total'
  | 'overloaded'
  | 'cancel';

/** Server config the tests vary (everything else the cell sets). */
type Extra = Partial<
  Pick<
    MCPServerConfigInput,
    'tools' | 'timeoutMs' | 'maxTotalTimeoutMs' | 'maxConcurrentCalls' | 'maxQueuedCalls'
  >
>;

/** One server under test, named `srv`. `await using` stops it (the manager is closed before it). */
interface ServerUnderTest extends AsyncDisposable {
  readonly config: MCPServerConfigInput;
  /** Ends the server at once with SIGKILL, as a crash would. */
  crash(manager: MCPClientManager): Promise<void>;
  /** Brings a crashed server back where the client expects it (stdio: the manager respawns it by itself). */
  revive(): Promise<void>;
  /** Makes the server forget every session id (the next request with an old one gets 404). */
  forget(): Promise<void>;
}

interface Cell {
  transport: Transport;
  era: Era;
  start(log: FixtureLog, extra: Extra): Promise<ServerUnderTest>;
  /**
   * How a cancelled call reaches the server: `notifications/cancelled`, or, 2026-07-28 over Streamable HTTP, the
   * request's own response stream closed (the SDK client aborts it instead of POSTing the notification).
   */
  cancelledBy: 'notification' | 'stream';
  /** The whole cell cannot apply. */
  skip?: string;
  /** Behaviours that cannot apply to this cell, each with the reason. */
  skips?: Partial<Record<Behaviour, string>>;
}

// Quick, steady retries: a revived HTTP server is found within a fraction of a second.
const RECONNECT = { initialDelayMs: 50, maxDelayMs: 200, maxAttempts: 100, jitter: 'none' } as const;

function stdioServer(fixture: 'modern' | 'echo') {
  return async (log: FixtureLog, extra: Extra): Promise<ServerUnderTest> => ({
    config: {
      name: 'srv',
      transport: 'stdio',
      ...nodeFixture(fixture),
      env: log.env,
      reconnect: RECONNECT,
      ...extra,
    },
    async crash(manager) {
      // The running server is the one that logged last (each line carries its pid); the manager sees the pipe
      // close and respawns it, and the crash is done once it started to.
      const pid = log.entries().at(-1)?.pid;
      if (pid === undefined) throw new Error('the server logged nothing yet, so its pid is unknown');
      const reconnecting = next(manager, 'reconnecting');
      process.kill(pid, 'SIGKILL');
      await reconnecting;
    },
    revive: async () => {},
    forget: () => Promise.reject(new Error('a stdio server has no session to forget')),
    [Symbol.asyncDispose]: async () => {},
  });
}

function httpServer(
  transport: 'http' | 'sse',
  start: (env: Record<string, string>, port?: number) => Promise<HttpServerProcess>,
) {
  return async (log: FixtureLog, extra: Extra): Promise<ServerUnderTest> => {
    const first = await start(log.env);
    let current = first;
    return {
      config: {
        name: 'srv',
        transport,
        url: transport === 'sse' ? first.sseUrl : first.mcpUrl,
        reconnect: RECONNECT,
        ...extra,
      },
      crash: () => current.kill(),
      async revive() {
        current = await start(log.env, first.port);
      },
      async forget() {
        const res = await fetch(`${current.url}/__forget`, { method: 'POST' });
        expect(res.status).toBe(204);
      },
      [Symbol.asyncDispose]: () => current.close(),
    };
  };
}

const NO_SESSION_2026 =
  '2026-07-28 over Streamable HTTP keeps no session a server could forget (every request stands alone)';
const STDIO_NEVER_SENT =
  'a stdio server has no session to lose, and its crash is seen at once (the pipe closes), so a later call waits out the reconnect instead (see "waits out a reconnect")';

const cells: Cell[] = [
  {
    transport: 'stdio',
    era: '2026-07-28',
    start: stdioServer('modern'),
    cancelledBy: 'notification',
    skips: { 'resend-never-sent': STDIO_NEVER_SENT },
  },
  {
    transport: 'stdio',
    era: '2025-11-25',
    start: stdioServer('echo'),
    cancelledBy: 'notification',
    skips: { 'resend-never-sent': STDIO_NEVER_SENT },
  },
  {
    transport: 'http',
    era: '2026-07-28',
    start: httpServer('http', (env, port) => startModernHttp({ env, port: port ?? 0 })),
    cancelledBy: 'stream',
    skips: { 'resend-never-sent': NO_SESSION_2026 },
  },
  {
    transport: 'http',
    era: '2025-11-25',
    start: httpServer('http', (env, port) => startHttpFixture({ transport: 'http', env, port: port ?? 0 })),
    cancelledBy: 'notification',
  },
  {
    transport: 'sse',
    era: '2026-07-28',
    start: () => Promise.reject(new Error('no such server')),
    cancelledBy: 'notification',
    skip: 'the legacy SSE transport (2024-11-05) ended before 2026-07-28; a 2026 server speaks Streamable HTTP or stdio only',
  },
  {
    transport: 'sse',
    era: '2025-11-25',
    start: httpServer('sse', (env, port) => startHttpFixture({ transport: 'sse', env, port: port ?? 0 })),
    cancelledBy: 'notification',
  },
];

function next<K extends keyof MCPManagerEvents & string>(
  manager: MCPClientManager,
  event: K,
): Promise<MCPManagerEvents[K]> {
  return new Promise((resolve) => manager.once(event, resolve));
}

/** The fixture log, the server and a manager connected to it; disposed in that order's reverse. */
interface Rig extends AsyncDisposable {
  manager: MCPClientManager;
  server: ServerUnderTest;
  log: FixtureLog;
}

async function rig(cell: Cell, extra: Extra = {}): Promise<Rig> {
  const log = createFixtureLog();
  let server: ServerUnderTest | undefined;
  const manager = new MCPClientManager({ capabilities: grants() });
  const dispose = async () => {
    await manager.close();
    await server?.[Symbol.asyncDispose]();
    await log.close();
  };
  try {
    server = await cell.start(log, extra);
    await manager.connectServer(server.config);
    expect(manager.health().srv?.protocolVersion).toBe(cell.era);
  } catch (err) {
    await dispose();
    throw err;
  }
  return { manager, server, log, [Symbol.asyncDispose]: dispose };
}

/** One rig for the tests of a describe block (started before them, closed after); none for a skipped cell. */
function sharedRig(cell: Cell, extra: Extra): () => Rig {
  let current: Rig | undefined;
  if (cell.skip === undefined) {
    beforeAll(async () => {
      current = await rig(cell, extra);
    });
    afterAll(async () => {
      await current?.[Symbol.asyncDispose]();
    });
  }
  return () => {
    if (current === undefined) throw new Error('the shared server is not started (use it inside a test)');
    return current;
  };
}

function grants(): CapabilitySet {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:srv:*', 'execute');
  return capabilities;
}

const isEqual = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The `tools/call` requests for `tool` the server logged, only those with exactly `args` when given. */
function callsOf(log: FixtureLog, tool: string, args?: Record<string, unknown>): FixtureLogEntry[] {
  const calls = log.toolCalls(tool);
  return args === undefined ? calls : calls.filter((e) => isEqual(e.args, args));
}

/** Resolves once the server logged a `tools/call` for `tool` (with `args` when given): it got the request. */
async function received(log: FixtureLog, tool: string, args?: Record<string, unknown>): Promise<void> {
  await vi.waitFor(() => expect(callsOf(log, tool, args).length).toBeGreaterThan(0), {
    timeout: CONDITION_TIMEOUT_MS,
    interval: 20,
  });
}

/** The error `call` rejects with (or its value): a rejection while the test awaits something else is not unhandled. */
function settle<T>(call: Promise<T>): Promise<T | unknown> {
  return call.catch((err: unknown) => err);
}

const echo = (m: MCPClientManager, text: string) => m.executeTool('mcp__srv__echo', { text });

describe.each(cells)('failure contract over $transport, protocol $era', (cell) => {
  const test = (behaviour: Behaviour, title: string, fn: () => Promise<void>) => {
    const reason = cell.skip ?? cell.skips?.[behaviour];
    if (reason === undefined) it(title, fn);
    else it.skip(`${title} — skipped: ${reason}`, fn);
  };

  describe('re-sending a call after a lost connection', () => {
    test(
      'resend-never-sent',
      're-sends, once, a call the server never received because it lost our session',
      async () => {
        await using r = await rig(cell);
        await r.server.forget();
        await expect(echo(r.manager, 'again')).resolves.toBe('again');
        expect(r.log.toolCalls('echo')).toHaveLength(1);
        expect(r.manager.health().srv).toMatchObject({ state: 'ready', reconnects: 1 });
      },
    );

    test(
      'resend-idempotent',
      'sends a call again once the server is back when the config marks the tool idempotent',
      async () => {
        await using r = await rig(cell, { tools: { idempotent: ['slow'] } });
        const call = settle(r.manager.executeTool('mcp__srv__slow', { ms: 800 }, { timeoutMs: 30_000 }));
        await received(r.log, 'slow');
        await r.server.crash(r.manager);
        await r.server.revive();
        expect(await call).toBe('slept 800');
        expect(r.log.toolCalls('slow')).toHaveLength(2);
      },
    );

    test(
      'no-resend',
      'never sends twice a call that may have reached the server: it fails with CONNECTION_LOST at once',
      async () => {
        await using r = await rig(cell);
        // A timeout far beyond the test's own: the call can only fail in time because the loss is noticed.
        const call = settle(r.manager.executeTool('mcp__srv__slow', { ms: 60_000 }, { timeoutMs: 120_000 }));
        await received(r.log, 'slow');
        await r.server.crash(r.manager);
        expect(await call).toMatchObject({ code: 'CONNECTION_LOST', server: 'srv' });
        await r.server.revive();
        // The server is back and usable, and the lost call was not sent to it again.
        await expect(echo(r.manager, 'back')).resolves.toBe('back');
        expect(r.log.toolCalls('slow')).toHaveLength(1);
        expect(r.manager.health().srv).toMatchObject({ state: 'ready', reconnects: 1 });
      },
    );
  });

  test(
    'reconnect-wait',
    'waits out a reconnect for a call made while reconnecting, within its timeout',
    async () => {
      await using r = await rig(cell);
      const reconnecting = next(r.manager, 'reconnecting');
      await r.server.crash(r.manager);
      // Over Streamable HTTP (2025) a client may learn of the crash only from its next request: a probe makes
      // sure it does. Whatever becomes of the probe, it is not the call under test.
      const probe = settle(echo(r.manager, 'probe'));
      await reconnecting;
      expect(r.manager.health().srv?.state).toBe('reconnecting');
      const call = settle(echo(r.manager, 'after'));
      await r.server.revive();
      expect(await call).toBe('after');
      await probe;
      expect(callsOf(r.log, 'echo', { text: 'after' })).toHaveLength(1);
    },
  );

  describe('on one server, shared', () => {
    // These leave no call in flight and nothing broken behind them, so they share one server: the file stays quick.
    const shared = sharedRig(cell, { maxConcurrentCalls: 1, maxQueuedCalls: 1 });

    test(
      'timeout',
      'times out a call that never answers with REQUEST_TIMEOUT, and the server stays usable',
      async () => {
        const { manager } = shared();
        await expect(
          manager.executeTool('mcp__srv__slow', { ms: 60_000 }, { timeoutMs: 300 }),
        ).rejects.toMatchObject({ code: 'REQUEST_TIMEOUT', server: 'srv' });
        await expect(echo(manager, 'alive')).resolves.toBe('alive');
      },
    );

    test(
      'progress-reset',
      'lets each progress notification reset the timeout of a call that runs past it',
      async () => {
        // 8 steps 120 ms apart: the call runs about twice its 500 ms timeout.
        const seen: number[] = [];
        const text = await shared().manager.executeTool(
          'mcp__srv__progress',
          { steps: 8, intervalMs: 120 },
          { timeoutMs: 500, onProgress: (p) => seen.push(p.progress) },
        );
        expect(text).toMatch(/^done/);
        expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      },
    );

    test(
      'max-total',
      'bounds the whole call by maxTotalTimeoutMs even while progress keeps coming',
      async () => {
        const { manager } = shared();
        const seen: number[] = [];
        await expect(
          manager.executeTool(
            'mcp__srv__progress',
            { steps: 100, intervalMs: 100 },
            { timeoutMs: 2_000, maxTotalTimeoutMs: 600, onProgress: (p) => seen.push(p.progress) },
          ),
        ).rejects.toMatchObject({ code: 'REQUEST_TIMEOUT', server: 'srv' });
        expect(seen.length).toBeGreaterThan(0);
        await expect(echo(manager, 'alive')).resolves.toBe('alive');
      },
    );

    test(
      'overloaded',
      'fails fast with OVERLOADED beyond maxConcurrentCalls and the queue, and runs the queued call when a slot frees',
      async () => {
        const { manager, log } = shared();
        const first = new AbortController();
        const holding = { ms: 59_000 };
        const running = settle(manager.executeTool('mcp__srv__slow', holding, { signal: first.signal }));
        await received(log, 'slow', holding);
        const queued = settle(echo(manager, 'queued'));
        await vi.waitFor(() => expect(manager.health().srv?.callsQueued).toBe(1), {
          timeout: CONDITION_TIMEOUT_MS,
        });
        await expect(echo(manager, 'one too many')).rejects.toMatchObject({
          code: 'OVERLOADED',
          server: 'srv',
        });
        first.abort();
        expect(await running).toMatchObject({ code: 'REQUEST_CANCELLED' });
        expect(await queued).toBe('queued');
        expect(callsOf(log, 'echo', { text: 'queued' })).toHaveLength(1);
        expect(callsOf(log, 'echo', { text: 'one too many' })).toEqual([]);
        expect(manager.health().srv).toMatchObject({ callsInFlight: 0, callsQueued: 0 });
      },
    );
  });

  test(
    'cancel',
    'cancels a call through its AbortSignal: the server stops it, and stays usable',
    async () => {
      await using r = await rig(cell);
      const controller = new AbortController();
      const call = r.manager.executeTool('mcp__srv__slow', { ms: 60_000 }, { signal: controller.signal });
      await received(r.log, 'slow');
      controller.abort();
      await expect(call).rejects.toMatchObject({ code: 'REQUEST_CANCELLED', server: 'srv' });
      // The server's handler saw its request signal abort.
      await vi.waitFor(() => expect(r.log.entries().some((e) => e.event === 'aborted')).toBe(true), {
        timeout: CONDITION_TIMEOUT_MS,
      });
      const cancels = r.log.entries().filter((e) => e.method === 'notifications/cancelled');
      if (cell.cancelledBy === 'notification') {
        // MCP cancellation: the notification names the request it cancels.
        const id = r.log.toolCalls('slow')[0]?.id;
        expect(cancels.map((e) => (e.params as { requestId?: unknown }).requestId)).toEqual([id]);
      } else {
        // 2026-07-28 Streamable HTTP: closing the request's response stream is the cancellation; nothing is POSTed.
        expect(cancels).toEqual([]);
      }
      await expect(echo(r.manager, 'still here')).resolves.toBe('still here');
    },
  );
});
