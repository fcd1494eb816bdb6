/**
 * A real `redis-server` (Debian's package, installed by .ci/run) on a free loopback port, one per test file: no
 * persistence, no mock. `stop()` and `start()` kill and restart it on the same port, for failure tests.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { freePort, waitForPort } from './net.js';
import { waitForExit } from './processes.js';

/** Whether `redis-server` is on PATH. */
export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

export interface RedisServer extends AsyncDisposable {
  readonly port: number;
  readonly url: string;
  /** Kills the server (SIGKILL): clients see a dropped connection. */
  stop(): Promise<void>;
  /** Starts it again on the same port: empty, or with its data when started with `persist`. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts a redis-server. With `persist`, it keeps an append-only file synced on every write in a temporary
 * directory, so a kill and restart keeps every counter (as a production Redis for quotas should).
 */
export async function startRedis(options: { persist?: boolean } = {}): Promise<RedisServer> {
  if (!hasRedisServer()) {
    throw new Error("redis-server is not installed: run 'apt-get install -y redis-server' (.ci/run does).");
  }
  const port = await freePort();
  const dir = options.persist === true ? mkdtempSync(join(tmpdir(), 'interlock-redis-')) : undefined;
  const persistence =
    dir === undefined
      ? ['--save', '', '--appendonly', 'no']
      : ['--save', '', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always'];
  let child: ChildProcess | undefined;
  const start = async () => {
    const proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', ...persistence, '--protected-mode', 'yes'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child = proc;
    let exited: string | undefined;
    proc.once('exit', (code) => {
      exited = `redis-server exited with code ${code}`;
    });
    await waitForPort(port, { stop: () => exited });
    // Accepting connections is not serving them yet (a restarted server may still be loading): wait for PONG.
    await waitForPong(port, () => exited);
  };
  const stop = async () => {
    const proc = child;
    child = undefined;
    if (proc?.pid === undefined || proc.exitCode !== null) return;
    proc.kill('SIGKILL');
    await waitForExit(proc.pid);
  };
  const close = async () => {
    await stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  };
  await start();
  return { port, url: `redis://127.0.0.1:${port}`, stop, start, close, [Symbol.asyncDispose]: close };
}

/** Polls until the server on `port` answers PING with PONG (10 s at most); `stopped()` giving a reason ends it. */
async function waitForPong(port: number, stopped: () => string | undefined): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const reason = stopped();
    if (reason !== undefined) throw new Error(reason);
    if ((await ping(port)) === '+PONG') return;
    if (Date.now() >= deadline)
      throw new Error(`redis-server on port ${port} did not answer PING within 10 s`);
    await delay(25);
  }
}

/** The first line of the server's answer to one PING, or undefined when the connection failed or closed. */
function ping(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let text = '';
    const done = (line: string | undefined) => {
      socket.destroy();
      resolve(line);
    };
    socket.setTimeout(1000, () => done(undefined));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n');
      if (end !== -1) done(text.slice(0, end));
    });
    socket.once('error', () => done(undefined));
    socket.once('close', () => done(undefined));
  });
}

/** One redis-server for the test file: started before its tests, stopped after. Read `.current` inside tests. */
export function redisForFile(options: { persist?: boolean } = {}): { readonly current: RedisServer } {
  let server: RedisServer | undefined;
  beforeAll(async () => {
    server = await startRedis(options);
  });
  afterAll(async () => {
    await server?.close();
  });
  return {
    get current(): RedisServer {
      if (server === undefined) throw new Error('redis-server is not started yet (use it inside a test)');
      return server;
    },
  };
}

const STATE_FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/state');

/** Runs one fleet worker (test/fixtures/state/<name>.ts) as its own Node process; resolves to its stdout. */
export function runStateWorker(name: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(STATE_FIXTURES, `${name}.ts`), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
    });
    child.on('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${name} exited with ${code}: ${err}`)),
    );
  });
}

/** A fleet worker that runs while the test talks to it: its stdout lines as they come, and a kill for cleanup. */
export interface StateWorker {
  /** Resolves with the first line (already printed or to come) that starts with `prefix`. */
  line(prefix: string): Promise<string>;
  /** Every line printed so far. */
  lines(): readonly string[];
  /** Resolves when the worker exits with 0; rejects with its stderr otherwise. */
  readonly done: Promise<void>;
  /** Writes a line to the worker's stdin, and resolves with the next line it prints starting with `reply`. */
  ask(line: string, reply: string): Promise<string>;
  /** Writes a line to the worker's stdin. */
  send(line: string): void;
  /** Sends a signal: `SIGSTOP` freezes the worker (a stalled process), `SIGCONT` thaws it. */
  signal(signal: NodeJS.Signals): void;
  kill(): void;
}

/** Starts one fleet worker (test/fixtures/state/<name>.ts) as its own Node process. */
export function startStateWorker(name: string, args: readonly string[]): StateWorker {
  const child = spawn(process.execPath, ['--import', 'tsx', join(STATE_FIXTURES, `${name}.ts`), ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin?.on('error', () => {});
  const lines: string[] = [];
  const waiting: { prefix: string; resolve: (line: string) => void }[] = [];
  let rest = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => {
    rest += c.toString();
    const parts = rest.split('\n');
    rest = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      for (const w of waiting.filter((x) => line.startsWith(x.prefix))) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const done = new Promise<void>((resolve, reject) => {
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${name} exited with ${code ?? signal}: ${err}`));
    });
  });
  done.catch(() => {});
  // A worker that dies first fails the wait instead of leaving it pending.
  const next = (prefix: string) =>
    Promise.race([
      new Promise<string>((resolve) => waiting.push({ prefix, resolve })),
      done.then(() => {
        throw new Error(`${name} exited before printing '${prefix}'`);
      }),
    ]);
  return {
    line: (prefix) => {
      const found = lines.find((l) => l.startsWith(prefix));
      return found !== undefined ? Promise.resolve(found) : next(prefix);
    },
    lines: () => [...lines],
    send: (line) => {
      child.stdin?.write(`${line}\n`);
    },
    ask: (line, reply) => {
      const answer = next(reply);
      child.stdin?.write(`${line}\n`);
      return answer;
    },
    done,
    signal: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
