/**
 * The bundled example servers (`examples/servers/*.mjs`, shipped in the package), found under the package's root
 * so the demo runs from `src/cli/demo/*.ts` under tsx and from the linked build in `dist/` alike.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ConnectionError } from '../../errors.js';
import { packageRoot } from '../package-root.js';

/** The path of a bundled example server; throws when the package does not hold it. */
export function exampleServer(file: 'notes-server.mjs' | 'weather-server.mjs'): string {
  const path = join(packageRoot(), 'examples', 'servers', file);
  if (!existsSync(path)) {
    throw new ConnectionError(`The bundled example server ${path} is missing; reinstall the package.`);
  }
  return path;
}

/** How long the weather server may take to print `LISTENING <port>`. */
const START_TIMEOUT_MS = 15_000;
/** How long it gets to exit after SIGTERM before SIGKILL. */
const KILL_GRACE_MS = 2_000;

/** A running weather server. `close()` ends the process and resolves once it exited; safe to call twice. */
export interface RunningServer {
  readonly url: string;
  readonly pid: number | undefined;
  close(): Promise<void>;
}

/** Starts the Streamable HTTP weather server on a free loopback port. */
export async function startWeatherServer(): Promise<RunningServer> {
  const child = spawn(process.execPath, [exampleServer('weather-server.mjs'), '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  // Should this process exit before close() ran (a second Ctrl-C), the server does not outlive it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<void>((resolve) => {
    const done = () => {
      process.off('exit', killOnExit);
      resolve();
    };
    child.once('exit', done);
    child.once('error', done);
  });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= stop(child, exited);
    return closing;
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(
        () => reject(new Error(`it printed no LISTENING line within ${START_TIMEOUT_MS} ms`)),
        START_TIMEOUT_MS,
      );
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        const match = /^LISTENING (\d+)$/m.exec(out);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`it exited with ${signal ?? `code ${code}`}`));
      });
    });
    return { url: `http://127.0.0.1:${port}/mcp`, pid: child.pid, close };
  } catch (err) {
    await close();
    const tail = stderr.trim() === '' ? '' : `\n${stderr.trim()}`;
    throw new ConnectionError(`The example weather server did not start: ${(err as Error).message}${tail}`, {
      cause: err,
      server: 'weather',
    });
  }
}

async function stop(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
  await exited;
  clearTimeout(timer);
}
