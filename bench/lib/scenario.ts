/**
 * Helpers of the in-process scenarios (bench/capability-check.ts, cedar-check.ts, flow-check.ts): a seeded PRNG so
 * runs compare, and the results file with the machine it was measured on.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A small deterministic PRNG (mulberry32), so runs compare. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The machine a result was measured on, in one line. */
export function machineLine(): string {
  return `Node ${process.version}, ${process.platform}/${process.arch}, ${cpus()[0]?.model} x ${cpus().length}, load ${loadavg()[0]?.toFixed(2)}`;
}

/** Writes bench/results/{name}.json: the machine, the time, and `fields`. Returns the path. */
export function writeScenarioResults(name: string, fields: Record<string, unknown>): string {
  const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'results', `${name}.json`);
  mkdirSync(dirname(out), { recursive: true });
  const machine = {
    node: process.version,
    platform: `${process.platform}/${process.arch}`,
    cpu: `${cpus()[0]?.model ?? 'unknown'} x ${cpus().length}`,
    loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
    date: new Date().toISOString(),
  };
  writeFileSync(out, `${JSON.stringify({ ...machine, ...fields }, null, 2)}\n`);
  return out;
}
