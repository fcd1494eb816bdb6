/** Starts `faulty-http.mjs` (optionally on a given port, to restart it in place) and injects faults. */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fixture } from './fixtures.js';

/** A running faulty-http server. `await using` kills it. */
export interface FaultyHttpServer extends AsyncDisposable {
  readonly port: number;
  readonly url: string;
  readonly pid: number;
  /** Arms a fault for the next tools/call (or, for `forget`, drops every session now). */
  inject(mode: '500' | 'reset' | 'drop' | 'forget'): Promise<void>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
}

export async function startFaultyHttp(port = 0): Promise<FaultyHttpServer> {
  const child: ChildProcess = spawn(process.execPath, [fixture('faulty-http'), '--port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  let listening: number | undefined;
  for await (const line of lines) {
    const m = /^LISTENING (\d+)$/.exec(line);
    if (m) {
      listening = Number(m[1]);
      break;
    }
  }
  clearTimeout(timer);
  if (listening === undefined) throw new Error(`faulty-http did not start: ${stderr}`);
  const base = `http://127.0.0.1:${listening}`;
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await once(child, 'exit');
  };
  return {
    port: listening,
    url: `${base}/mcp`,
    pid: child.pid as number,
    async inject(mode) {
      const res = await fetch(`${base}/__fault`, { method: 'POST', body: JSON.stringify({ mode }) });
      if (res.status !== 204) throw new Error(`fault injection failed: ${res.status}`);
    },
    kill,
    [Symbol.asyncDispose]: kill,
  };
}
