/**
 * A real `redis-server` (Debian's package, installed by .ci/run) on a free loopback port, one per test file: no
 * persistence, no mock. `stop()` and `start()` kill and restart it on the same port, for failure tests.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
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
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startRedis(): Promise<RedisServer> {
  if (!hasRedisServer()) {
    throw new Error("redis-server is not installed: run 'apt-get install -y redis-server' (.ci/run does).");
  }
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    const proc = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--protected-mode',
        'yes',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child = proc;
    let exited: string | undefined;
    proc.once('exit', (code) => {
      exited = `redis-server exited with code ${code}`;
    });
    await waitForPort(port, { stop: () => exited });
  };
  const stop = async () => {
    const proc = child;
    child = undefined;
    if (proc?.pid === undefined || proc.exitCode !== null) return;
    proc.kill('SIGKILL');
    await waitForExit(proc.pid);
  };
  await start();
  return { port, url: `redis://127.0.0.1:${port}`, stop, start, close: stop, [Symbol.asyncDispose]: stop };
}
