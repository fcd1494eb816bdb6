/**
 * The Cedar path's check cost next to the native one (issue 40): one policy both ways, native rules and their
 * Cedar export (`policyToCedar`), checked with the same requests; p50 and p99 per check.
 *
 *   node --import tsx bench/cedar-check.ts
 *
 * Prints a table and writes bench/results/cedar-check.json. Its own process, apart from capability-check.ts: run
 * after the native scenarios in one process, Node 20's V8 aborted in its deoptimizer (`unreachable code`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Security from '../src/security/index.js';
import type { CapabilitySet, CheckContext } from '../src/security/index.js';
import { ensureInterlockBuild, importBuild } from './lib/processes.js';

const security = await importBuild<typeof Security>(
  ensureInterlockBuild({ modules: true }),
  'security/index.js',
);

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
}

/** Requests over the scenario's servers (about 10% unknown) and tools, as capability-check.ts draws them. */
function requests(s: Scenario, n: number, rand: () => number): [string, CheckContext][] {
  const context: CheckContext = { args: { path: 'data/file.txt' } };
  const out: [string, CheckContext][] = [];
  for (let i = 0; i < n; i++) {
    const server = Math.floor(rand() * s.servers * 1.1);
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
              : `push${j}`;
    out.push([`mcp:srv${server}:${tool}`, context]);
  }
  return out;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

// One policy both ways: native rules, and their Cedar export (`policyToCedar`), checked with the same requests.
// Cedar evaluates every policy of the set for each request (no index by server), through a wasm call.
const CEDAR_CHECKS = 2_000;
const CEDAR_WARMUP = 200;

function cedarPolicy(servers: number, rulesPerServer: number): Security.Policy {
  const rules: Security.PolicyRule[] = [];
  for (let i = 0; i < servers; i++) {
    for (let j = 0; j < rulesPerServer; j++) {
      const kind = j % 20;
      const base = { actions: 'execute' as const };
      if (kind < 13) rules.push({ ...base, effect: 'allow', resource: `mcp:srv${i}:tool${j}` });
      else if (kind < 16) rules.push({ ...base, effect: 'allow', resource: `mcp:srv${i}:read_${j}_*` });
      else if (kind < 18) rules.push({ ...base, effect: 'deny', resource: `mcp:srv${i}:delete_${j}*` });
      else if (kind === 18) rules.push({ ...base, effect: 'ask', resource: `mcp:srv${i}:push${j}` });
      else
        rules.push({
          ...base,
          effect: 'allow',
          resource: `mcp:srv${i}:write${j}`,
          when: { args: { path: { startsWith: 'data/' } } },
        });
    }
  }
  return { version: 1, rules };
}

function timeChecks(set: CapabilitySet, reqs: readonly [string, CheckContext][]) {
  const times = new Float64Array(reqs.length);
  let allowed = 0;
  for (let i = 0; i < reqs.length; i++) {
    const [resource, ctx] = reqs[i]!;
    const t0 = process.hrtime.bigint();
    const d = set.check(resource, 'execute', ctx);
    times[i] = Number(process.hrtime.bigint() - t0) / 1000;
    if (d.allowed) allowed++;
  }
  times.sort();
  const round = (x: number) => Math.round(Math.max(0, x) * 1000) / 1000;
  return {
    p50Us: round(percentile(times, 0.5)),
    p99Us: round(percentile(times, 0.99)),
    allowedShare: round(allowed / reqs.length),
  };
}

function runCedar(s: Scenario) {
  const policy = cedarPolicy(s.servers, s.rulesPerServer);
  const native = security.CapabilitySet.fromPolicy(policy);
  const cedar = security.CapabilitySet.fromCedar(security.policyToCedar(policy));
  const context: CheckContext = { args: { path: 'data/file.txt' } };
  const reqs = requests(s, CEDAR_WARMUP + CEDAR_CHECKS, random(7)).map(
    ([resource]): [string, CheckContext] => [resource, context],
  );
  const warm = reqs.slice(0, CEDAR_WARMUP);
  const timed = reqs.slice(CEDAR_WARMUP);
  timeChecks(native, warm);
  timeChecks(cedar, warm);
  const n = timeChecks(native, timed);
  const c = timeChecks(cedar, timed);
  if (n.allowedShare !== c.allowedShare) {
    throw new Error(`native and Cedar disagree: allowed ${n.allowedShare} vs ${c.allowedShare}`);
  }
  return {
    name: s.name,
    rules: policy.rules.length,
    checks: CEDAR_CHECKS,
    allowedShare: n.allowedShare,
    nativeP50Us: n.p50Us,
    nativeP99Us: n.p99Us,
    cedarP50Us: c.p50Us,
    cedarP99Us: c.p99Us,
  };
}

const cedarScenarios: Scenario[] = [
  { name: 'Cedar vs native, 20 rules, 1 server', servers: 1, rulesPerServer: 20 },
  { name: 'Cedar vs native, 200 rules, 10 servers x 20', servers: 10, rulesPerServer: 20 },
  { name: 'Cedar vs native, 1 000 rules, 50 servers x 20', servers: 50, rulesPerServer: 20 },
];
const cedar = cedarScenarios.map(runCedar);
console.table(cedar);

const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'cedar-check.json');
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
      results: cedar,
    },
    null,
    2,
  )}\n`,
);
console.log(`wrote ${out} (load ${loadavg()[0]?.toFixed(2)})`);
