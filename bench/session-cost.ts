/**
 * What running a stdio server in its own session costs per call (a finding of issue 8). Interlock spawns
 * stdio servers with `detached: true` (setsid: a new session and process group, so closing reaches
 * grandchildren). On Linux with `kernel.sched_autogroup_enabled=1` a new session is also a new scheduler
 * autogroup. This measures plain JSON-RPC round trips to `servers/echo-raw.mjs` over pipes, no MCP library
 * involved, with the server spawned each way, interleaved.
 *
 *   node --import tsx bench/session-cost.ts [--calls 2000] [--rounds 8]
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ECHO_RAW } from './lib/paths.js';
import { median, quantile } from './lib/stats.js';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '8' } },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);

/** A server and a function that sends one `tools/call` and resolves on its answer. */
function start(detached: boolean): { child: ChildProcessWithoutNullStreams; call: () => Promise<void> } {
  const child = spawn(process.execPath, [ECHO_RAW], { stdio: 'pipe', detached });
  let waiting: (() => void) | undefined;
  let pending = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    while (pending.includes('\n')) {
      pending = pending.slice(pending.indexOf('\n') + 1);
      const done = waiting;
      waiting = undefined;
      done?.();
    }
  });
  let id = 0;
  const call = () =>
    new Promise<void>((resolve) => {
      waiting = resolve;
      const message = {
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'hello' } },
      };
      child.stdin.write(`${JSON.stringify(message)}\n`);
    });
  return { child, call };
}

const variants = { 'same session': start(false), 'own session (detached)': start(true) };
const cpu: Record<string, number[]> = { 'same session': [], 'own session (detached)': [] };
const latency: Record<string, number[]> = { 'same session': [], 'own session (detached)': [] };
for (const { call } of Object.values(variants)) for (let i = 0; i < 500; i++) await call();
for (let r = 0; r < rounds; r++) {
  for (const [name, { call }] of Object.entries(variants)) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now();
      await call();
      latency[name]!.push((performance.now() - t0) * 1000);
    }
    const c = process.cpuUsage(c0);
    cpu[name]!.push((c.user + c.system) / calls);
  }
}
let autogroup = 'unknown';
try {
  autogroup = readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim();
} catch {}
console.log(`sched_autogroup_enabled: ${autogroup}; ${rounds} rounds x ${calls} sequential calls each`);
for (const name of Object.keys(variants)) {
  console.log(
    `${name.padEnd(24)} latency p50 ${quantile(latency[name]!, 0.5).toFixed(1)} µs, ` +
      `client CPU per call ${median(cpu[name]!).toFixed(1)} µs`,
  );
}
for (const { child } of Object.values(variants)) child.kill();
