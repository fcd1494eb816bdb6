/**
 * What a shared quota costs (issue 16): the gate's authorize on a 1 000-rule set through an allow rule with
 * `maxCalls`, counted in this process, in the in-process state store, and in Redis (a real redis-server started on
 * a free loopback port). Sequential calls, then 64 concurrent callers (issue 41): p50 and p99 per authorization,
 * one Redis round trip per decision, and with leased units (`FleetQuotaCounter` with `lease`).
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
import { FleetQuotaCounter, MemoryStateStore, RedisStateStore } from '../src/state/index.js';

const CALLS = 5_000;
const WARMUP = 500;
/** Concurrent callers of the concurrent rows. */
const CONCURRENCY = 64;
/** Decisions of a concurrent row (spread over the callers). */
const CONCURRENT_CALLS = 64_000;

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

/** `CONCURRENT_CALLS` authorizations by `CONCURRENCY` callers at once; p50 and p99 of one, and decisions a second. */
async function measureConcurrent(
  counter: QuotaCounter | undefined,
): Promise<{ p50Us: number; p99Us: number; perSecond: number }> {
  const gate = new CapabilityGate({ capabilities: buildSet(counter) });
  const request = { resource: 'mcp:search:query', action: 'execute', context: { agent: 'bench' } };
  const run = async (calls: number, times?: Float64Array) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = next++; i < calls; i = next++) {
          // Each call arrives on its own turn of the event loop, as a request from a socket does (the store's
          // answers are read between them); only the decision is timed.
          await new Promise((resolve) => setImmediate(resolve));
          const t0 = process.hrtime.bigint();
          await gate.authorize(request);
          if (times !== undefined) times[i] = Number(process.hrtime.bigint() - t0) / 1_000;
        }
      }),
    );
  };
  await run(WARMUP * 4);
  const times = new Float64Array(CONCURRENT_CALLS);
  const t0 = process.hrtime.bigint();
  await run(CONCURRENT_CALLS, times);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  times.sort();
  const at = (p: number) =>
    Math.round(times[Math.min(CONCURRENT_CALLS - 1, Math.floor(p * CONCURRENT_CALLS))]! * 100) / 100;
  return { p50Us: at(0.5), p99Us: at(0.99), perSecond: Math.round(CONCURRENT_CALLS / seconds) };
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
    'FleetQuotaCounter, leased units': await measure(new FleetQuotaCounter(store, { lease: {} })),
  };
  // Alternated, so that both see the same load on a shared machine.
  const concurrent: Record<string, { p50Us: number; p99Us: number; perSecond: number }[]> = {
    'in process (no counter)': [],
    'FleetQuotaCounter, a round trip each': [],
    'FleetQuotaCounter, leased units': [],
  };
  for (let round = 0; round < 3; round++) {
    concurrent['in process (no counter)']!.push(await measureConcurrent(undefined));
    concurrent['FleetQuotaCounter, a round trip each']!.push(
      await measureConcurrent(new FleetQuotaCounter(store)),
    );
    const leased = new FleetQuotaCounter(store, { lease: {} });
    concurrent['FleetQuotaCounter, leased units']!.push(await measureConcurrent(leased));
    await leased.close();
  }
  const median = (xs: { p50Us: number; p99Us: number; perSecond: number }[]) => {
    const mid = (f: (x: (typeof xs)[number]) => number) => xs.map(f).sort((a, b) => a - b)[xs.length >> 1]!;
    return { p50Us: mid((x) => x.p50Us), p99Us: mid((x) => x.p99Us), perSecond: mid((x) => x.perSecond) };
  };
  const concurrentRows = Object.fromEntries(Object.entries(concurrent).map(([k, v]) => [k, median(v)]));
  await store.close();
  console.log(`authorize through a maxCalls rule, ${CALLS} sequential calls (µs)`);
  for (const [name, r] of Object.entries(rows))
    console.log(`  ${name.padEnd(38)} p50 ${r.p50Us}  p99 ${r.p99Us}`);
  console.log(
    `authorize through a maxCalls rule, ${CONCURRENCY} concurrent callers, ${CONCURRENT_CALLS} calls (µs; median of 3 rounds)`,
  );
  for (const [name, r] of Object.entries(concurrentRows))
    console.log(`  ${name.padEnd(38)} p50 ${r.p50Us}  p99 ${r.p99Us}  ${r.perSecond}/s`);
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'shared-quota.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, cpus: cpus().length, load: loadavg(), calls: CALLS, rows, concurrency: CONCURRENCY, concurrentCalls: CONCURRENT_CALLS, concurrentRows }, null, 2)}\n`,
  );
} finally {
  redis.kill('SIGKILL');
}
