/**
 * What a shared quota costs (issue 16): the gate's authorize on a 1 000-rule set through an allow rule with
 * `maxCalls`, counted in this process, in the in-process state store, and in Redis (a real redis-server started on
 * a free loopback port). Sequential calls, p50 and p99 per authorization.
 *
 *   node --import tsx bench/shared-quota.ts
 *
 * Prints a table and writes bench/results/shared-quota.json. Needs `redis-server` on PATH.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { CapabilityGate, CapabilitySet, type QuotaCounter } from '../src/security/index.js';
import { MemoryStateStore, RedisStateStore } from '../src/state/index.js';

const CALLS = 5_000;
const WARMUP = 500;

function buildSet(counter: QuotaCounter | undefined): CapabilitySet {
  const set = new CapabilitySet({ quotaCounter: counter });
  for (let i = 0; i < 50; i++) for (let j = 0; j < 20; j++) set.grant(`mcp:srv${i}:tool${j}`, 'execute');
  set.grant('mcp:search:query', 'execute', { id: 'budget', maxCalls: 1_000_000_000, per: '1h' });
  return set;
}

async function measure(counter: QuotaCounter | undefined): Promise<{ p50Us: number; p99Us: number }> {
  const gate = new CapabilityGate({ capabilities: buildSet(counter) });
  const request = { resource: 'mcp:search:query', action: 'execute', context: { agent: 'bench' } };
  for (let i = 0; i < WARMUP; i++) await gate.authorize(request);
  const times = new Float64Array(CALLS);
  for (let i = 0; i < CALLS; i++) {
    const t0 = process.hrtime.bigint();
    await gate.authorize(request);
    times[i] = Number(process.hrtime.bigint() - t0) / 1_000;
  }
  times.sort();
  const at = (p: number) => Math.round(times[Math.min(CALLS - 1, Math.floor(p * CALLS))]! * 100) / 100;
  return { p50Us: at(0.5), p99Us: at(0.99) };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const port = await freePort();
const redis = spawn(
  'redis-server',
  ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
  {
    stdio: 'ignore',
  },
);
try {
  let store: RedisStateStore | undefined;
  for (let i = 0; i < 100 && store === undefined; i++) {
    store = await RedisStateStore.connect({ url: `redis://127.0.0.1:${port}` }).catch(() => undefined);
    if (store === undefined) await delay(50);
  }
  if (store === undefined) throw new Error('redis-server did not start');
  const rows = {
    'in process (no counter)': await measure(undefined),
    'MemoryStateStore counter': await measure(new MemoryStateStore()),
    'RedisStateStore counter (loopback)': await measure(store),
  };
  await store.close();
  console.log(`authorize through a maxCalls rule, ${CALLS} sequential calls (µs)`);
  for (const [name, r] of Object.entries(rows))
    console.log(`  ${name.padEnd(38)} p50 ${r.p50Us}  p99 ${r.p99Us}`);
  const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'shared-quota.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, cpus: cpus().length, load: loadavg(), calls: CALLS, rows }, null, 2)}\n`,
  );
} finally {
  redis.kill('SIGKILL');
}
