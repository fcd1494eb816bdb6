/**
 * Capability check latency (issue 3, "Tests"): 1 000 rules, 100 000 random checks, p50 and p99 per
 * check. More scenarios show that cost follows the rules of one server, not all rules.
 *
 *   node --import tsx bench/capability-check.ts
 *
 * Prints a table and writes bench/results/capability-check.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Security from '../src/security/index.js';
import type { CapabilitySet, CheckContext } from '../src/security/index.js';
import { ensureInterlockBuild, importBuild } from './lib/processes.js';

// The compiled package, as the contenders run it: tsx would rewrite the TypeScript sources with a `__name` call
// wherever a named function is created (see BUILD_DIR in bench/lib/paths.ts).
const security = await importBuild<typeof Security>(
  ensureInterlockBuild({ modules: true }),
  'security/index.js',
);
const { DEFAULT_MATCH_CACHE_SIZE } = security;

const CHECKS = 100_000;
const WARMUP = 20_000;

/** A small deterministic PRNG, so runs compare. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Scenario {
  name: string;
  servers: number;
  rulesPerServer: number;
  /** Match cache size (0: every check matches patterns from scratch). */
  cache?: number;
}

/** Builds `servers` x `rulesPerServer` rules of mixed kinds, plus 10 rules with a wildcard server. */
function buildSet(s: Scenario): CapabilitySet {
  const set = new security.CapabilitySet({ matchCacheSize: s.cache });
  for (let i = 0; i < s.servers; i++) {
    for (let j = 0; j < s.rulesPerServer; j++) {
      const kind = j % 20;
      if (kind < 13) set.grant(`mcp:srv${i}:tool${j}`, 'execute');
      else if (kind < 16) set.grant(`mcp:srv${i}:read_${j}_*`, 'execute');
      else if (kind < 18) set.deny(`mcp:srv${i}:delete_${j}*`, 'execute');
      else if (kind === 18) set.ask(`mcp:srv${i}:push${j}`, 'execute');
      else
        set.grant(`mcp:srv${i}:write${j}`, 'execute', { when: { args: { path: { startsWith: '/data' } } } });
    }
  }
  for (let k = 0; k < 10; k++) set.deny(`mcp:*:admin_${k}_*`, 'execute');
  return set;
}

function requests(s: Scenario, n: number, rand: () => number): [string, CheckContext][] {
  const context: CheckContext = { args: { path: '/data/file.txt' } };
  const out: [string, CheckContext][] = [];
  for (let i = 0; i < n; i++) {
    const server = Math.floor(rand() * s.servers * 1.1); // ~10% unknown servers
    const j = Math.floor(rand() * s.rulesPerServer);
    const r = rand();
    const tool =
      r < 0.5
        ? `tool${j}`
        : r < 0.7
          ? `read_${j}_x`
          : r < 0.8
            ? `delete_${j}`
            : r < 0.9
              ? `write${j}`
              : `admin_${j % 10}_x`;
    out.push([`mcp:srv${server}:${tool}`, context]);
  }
  return out;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

function run(s: Scenario) {
  const set = buildSet(s);
  const rand = random(42);
  const warm = requests(s, WARMUP, rand);
  for (const [resource, ctx] of warm) set.check(resource, 'execute', ctx);
  const reqs = requests(s, CHECKS, rand);
  const times = new Float64Array(CHECKS);
  let allowed = 0;
  for (let i = 0; i < CHECKS; i++) {
    const [resource, ctx] = reqs[i]!;
    const t0 = process.hrtime.bigint();
    const d = set.check(resource, 'execute', ctx);
    const t1 = process.hrtime.bigint();
    times[i] = Number(t1 - t0) / 1000;
    if (d.allowed) allowed++;
  }
  // Timer overhead, measured the same way around nothing, is subtracted from the percentiles.
  const empty = new Float64Array(CHECKS);
  for (let i = 0; i < CHECKS; i++) {
    const t0 = process.hrtime.bigint();
    const t1 = process.hrtime.bigint();
    empty[i] = Number(t1 - t0) / 1000;
  }
  times.sort();
  empty.sort();
  const overhead = percentile(empty, 0.5);
  const round = (x: number) => Math.round(Math.max(0, x) * 1000) / 1000;
  return {
    name: s.name,
    rules: set.rules.length,
    rulesPerServer: s.rulesPerServer,
    matchCache: s.cache ?? DEFAULT_MATCH_CACHE_SIZE,
    checks: CHECKS,
    allowedShare: round(allowed / CHECKS),
    p50Us: round(percentile(times, 0.5) - overhead),
    p99Us: round(percentile(times, 0.99) - overhead),
    timerOverheadUs: round(overhead),
  };
}

const scenarios: Scenario[] = [
  { name: '1 000 rules, 50 servers x 20', servers: 50, rulesPerServer: 20 },
  { name: '1 000 rules, match cache off', servers: 50, rulesPerServer: 20, cache: 0 },
  { name: '10 000 rules, 500 servers x 20', servers: 500, rulesPerServer: 20 },
  { name: '1 000 rules, 1 server x 1 000', servers: 1, rulesPerServer: 1000 },
  { name: '1 000 rules, 1 server x 1 000, cache off', servers: 1, rulesPerServer: 1000, cache: 0 },
];
const results = scenarios.map(run);
const target = results[0]!;
console.table(results);
console.log(
  `target (1 000 rules): p50 ${target.p50Us} us (goal < 2), p99 ${target.p99Us} us (goal < 20) ` +
    `on Node ${process.version}, ${process.platform}/${process.arch}, ${cpus()[0]?.model} x ${cpus().length}, load ${loadavg()[0]?.toFixed(2)}`,
);
const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'capability-check.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify(
    {
      node: process.version,
      platform: `${process.platform}/${process.arch}`,
      cpu: `${cpus()[0]?.model ?? 'unknown'} x ${cpus().length}`,
      loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
      date: new Date().toISOString(),
      results,
    },
    null,
    2,
  )}\n`,
);
console.log(`wrote ${out}`);
