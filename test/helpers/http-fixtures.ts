// Start HTTP MCP servers as real child processes: our echo fixture, and @modelcontextprotocol/server-everything.
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fixture } from './fixtures.js';
import { freePort, waitForPort } from './net.js';

/** Default time to wait for a server to listen. Generous: the machine is shared. */
export const DEFAULT_START_TIMEOUT_MS = 15_000;
/** Time `close()` gives SIGTERM before it sends SIGKILL. */
export const DEFAULT_KILL_GRACE_MS = 3_000;
const STDERR_KEEP_CHARS = 16_384;
const PRELOAD = pathToFileURL(
  resolve(dirname(fileURLToPath(import.meta.url)), '../fixtures/preload-loopback.mjs'),
).href;

/** A running HTTP MCP server process. `await using` closes it. */
export interface HttpServerProcess extends AsyncDisposable {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** Streamable HTTP endpoint (`<url>/mcp`). */
  readonly mcpUrl: string;
  /** Legacy SSE stream endpoint (`<url>/sse`). */
  readonly sseUrl: string;
  /** The URL a client of this server's mode should use (`mcpUrl` or `sseUrl`). */
  readonly endpoint: string;
  readonly port: number;
  readonly pid: number;
  /** The child process, for fault tests (e.g. `child.kill('SIGKILL')`). */
  readonly child: ChildProcess;
  /** The last 16 KiB the server wrote to stderr. */
  stderr(): string;
  /** SIGTERM, then SIGKILL after a grace period; resolves once the process exited. Safe to call twice. */
  close(): Promise<void>;
  /** SIGKILL at once, as a crash would end it; resolves once the process exited. Safe to call twice. */
  kill(): Promise<void>;
}

/** Options of {@link startHttpFixture}. */
export interface HttpFixtureOptions {
  /** Which HTTP transport(s) `echo.mjs` serves. */
  transport: 'http' | 'sse' | 'both';
  /** Extra env vars (FIXTURE_LOG, FIXTURE_TOOL_PREFIX, ...), on top of this process's env. */
  env?: Record<string, string>;
  /** Port to listen on. @default 0 (the fixture picks one and reports it) */
  port?: number;
  /** How long to wait for `LISTENING <port>`. @default DEFAULT_START_TIMEOUT_MS */
  timeoutMs?: number;
}

interface Spawned {
  child: ChildProcess;
  stderr(): string;
  exitReason(): string | undefined;
  close(): Promise<void>;
}

const live = new Set<ChildProcess>();
// Last resort if a test forgets close(): nothing we spawned outlives this worker.
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

function spawnServer(args: string[], env: Record<string, string>): Spawned {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env, FIXTURE_STDIN_LIFELINE: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  live.add(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_KEEP_CHARS);
  });
  let exitReason: string | undefined;
  const exited = new Promise<void>((done) => {
    child.once('exit', (code, signal) => {
      exitReason = `exited with ${signal ?? `code ${code}`}`;
      live.delete(child);
      done();
    });
    child.once('error', (err) => {
      exitReason ??= `failed to spawn: ${err.message}`;
      live.delete(child);
      done();
    });
  });
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      if (exitReason === undefined) {
        child.stdin?.end();
        child.kill('SIGTERM');
        const grace = setTimeout(() => child.kill('SIGKILL'), DEFAULT_KILL_GRACE_MS);
        await exited;
        clearTimeout(grace);
      }
    })();
    return closing;
  };
  return { child, stderr: () => stderr, exitReason: () => exitReason, close };
}

function handle(spawned: Spawned, port: number, mode: 'streamable' | 'sse'): HttpServerProcess {
  const url = `http://127.0.0.1:${port}`;
  const mcpUrl = `${url}/mcp`;
  const sseUrl = `${url}/sse`;
  return {
    url,
    mcpUrl,
    sseUrl,
    endpoint: mode === 'sse' ? sseUrl : mcpUrl,
    port,
    pid: spawned.child.pid ?? -1,
    child: spawned.child,
    stderr: spawned.stderr,
    close: spawned.close,
    kill: async () => {
      spawned.child.kill('SIGKILL');
      await spawned.close();
    },
    [Symbol.asyncDispose]: spawned.close,
  };
}

function startFailure(what: string, reason: string, stderr: string): Error {
  const tail = stderr.trim() === '' ? '(no stderr)' : stderr.trim();
  return new Error(`${what} did not start: ${reason}. stderr:\n${tail}`);
}

/**
 * Spawns `echo.mjs` in an HTTP mode and waits for its `LISTENING <port>` line.
 * `endpoint` is `mcpUrl` for `http`/`both`, `sseUrl` for `sse`.
 */
export async function startHttpFixture(options: HttpFixtureOptions): Promise<HttpServerProcess> {
  const { transport, env = {}, port = 0, timeoutMs = DEFAULT_START_TIMEOUT_MS } = options;
  const what = `echo fixture (--transport ${transport})`;
  const spawned = spawnServer([fixture('echo'), '--transport', transport, '--port', String(port)], env);
  return whenListening(spawned, what, timeoutMs, transport === 'sse' ? 'sse' : 'streamable');
}

/**
 * Spawns a protocol 2026-07-28 fixture (`modern.mjs`, `tasks-modern.mjs` or `skills.mjs`; SDK v2 server) on Streamable HTTP and waits for its
 * `LISTENING <port>` line. `port` 0 lets it pick; pass the old port to restart it where a client expects it.
 */
export async function startModernHttp(
  options: {
    port?: number;
    timeoutMs?: number;
    fixture?: 'modern' | 'tasks-modern' | 'skills';
    /** Extra env vars (FIXTURE_LOG, ...), on top of this process's env. */
    env?: Record<string, string>;
  } = {},
): Promise<HttpServerProcess> {
  const { port = 0, timeoutMs = DEFAULT_START_TIMEOUT_MS, fixture: name = 'modern', env = {} } = options;
  const spawned = spawnServer([fixture(name), '--port', String(port)], env);
  return whenListening(spawned, `${name} fixture (http)`, timeoutMs, 'streamable');
}

/**
 * Spawns the scripted hostile server (`hostile-answers.mjs`) on Streamable HTTP with `args` (`--era …`) and waits for
 * its `LISTENING <port>` line.
 */
export async function startHostileHttp(args: readonly string[]): Promise<HttpServerProcess> {
  const spawned = spawnServer([fixture('hostile-answers'), ...args, '--port', '0'], {});
  return whenListening(spawned, 'hostile-answers fixture (http)', DEFAULT_START_TIMEOUT_MS, 'streamable');
}

/** Waits for the `LISTENING <port>` line of a spawned fixture; closes it when it does not come. */
async function whenListening(
  spawned: Spawned,
  what: string,
  timeoutMs: number,
  mode: 'streamable' | 'sse',
): Promise<HttpServerProcess> {
  try {
    const bound = await new Promise<number>((resolvePort, reject) => {
      let out = '';
      const timer = setTimeout(
        () => reject(startFailure(what, `no LISTENING line within ${timeoutMs} ms`, spawned.stderr())),
        timeoutMs,
      );
      spawned.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        const match = /^LISTENING (\d+)$/m.exec(out);
        if (match) {
          clearTimeout(timer);
          resolvePort(Number(match[1]));
        }
      });
      spawned.child.once('exit', () => {
        clearTimeout(timer);
        // Let the last stderr chunk arrive before reporting it.
        setImmediate(() => reject(startFailure(what, spawned.exitReason() ?? 'exited', spawned.stderr())));
      });
    });
    return handle(spawned, bound, mode);
  } catch (err) {
    await spawned.close();
    throw err;
  }
}

const require = createRequire(import.meta.url);
/** Entry point of `@modelcontextprotocol/server-everything`. */
export const EVERYTHING_BIN = join(
  dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);

/**
 * Spawns `@modelcontextprotocol/server-everything` in `sse` or `streamableHttp` mode and waits until it
 * accepts connections. It reads only `PORT` (no host setting) and would bind all interfaces, so it runs
 * with a preload that forces 127.0.0.1. Endpoints: streamableHttp serves `/mcp` (POST/GET/DELETE);
 * sse serves `GET /sse` and `POST /message?sessionId=`.
 */
export async function startEverything(
  mode: 'sse' | 'streamableHttp',
  {
    timeoutMs = DEFAULT_START_TIMEOUT_MS,
    env = {},
    port: fixedPort,
  }: {
    timeoutMs?: number;
    env?: Record<string, string>;
    /** Listen here (e.g. to restart a server where its clients expect it). @default a free port */
    port?: number | undefined;
  } = {},
): Promise<HttpServerProcess> {
  const what = `server-everything (${mode})`;
  // freePort() can race with another process; retry a couple of times when the port was taken.
  for (let attempt = 1; ; attempt++) {
    const port = fixedPort ?? (await freePort());
    const spawned = spawnServer(['--import', PRELOAD, EVERYTHING_BIN, mode], { ...env, PORT: String(port) });
    spawned.child.stdout?.resume(); // it logs to stdout; a full pipe would block it
    try {
      await waitForPort(port, { timeoutMs, stop: spawned.exitReason });
      return handle(spawned, port, mode === 'sse' ? 'sse' : 'streamable');
    } catch (err) {
      await spawned.close();
      if (attempt < 3 && spawned.stderr().includes('EADDRINUSE')) continue;
      const reason = spawned.exitReason() ?? (err as Error).message;
      throw startFailure(what, reason, spawned.stderr());
    }
  }
}
