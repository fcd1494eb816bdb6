/**
 * The results of a run (`bench/results/latest.json`): per figure and contender, the value of every round,
 * the ratio to the raw SDK measured in the same round, and their medians over rounds (issue 8: the machine
 * is shared and absolute times drift, so ratios are taken within a round).
 */

import { CONTENDER_IDS, type ContenderId } from './peers.js';
import type { CapabilityFigure } from './processes.js';
import { median, round } from './stats.js';

/** Version of the results file layout. */
export const RESULTS_SCHEMA = 1;

/** The baseline every ratio is taken against. */
export const BASELINE: ContenderId = 'sdk';

/** One contender's value for one figure. */
export interface MetricValue {
  /** Median over rounds (for `reconnect`: over all samples); null when it has none. */
  value: number | null;
  /**
   * Median over rounds of this contender's cost relative to the raw SDK in the same round: value / SDK's for
   * times and sizes, SDK's / value for throughput. Below 1 is better than the raw SDK. Null without both.
   */
  ratio: number | null;
  rounds: (number | null)[];
  ratioRounds: (number | null)[];
  /** Why there is no value (failed, or not supported by this contender). */
  error?: string | undefined;
}

/** One figure of the table. */
export interface Metric {
  id: string;
  label: string;
  unit: string;
  better: 'lower' | 'higher';
  values: Partial<Record<ContenderId, MetricValue>>;
}

export interface ContenderStatus {
  id: ContenderId;
  label: string;
  pkg: string;
  version: string | undefined;
  status: 'ran' | 'skipped';
  reason?: string | undefined;
}

export interface Target {
  id: string;
  text: string;
  /** null when the figures it needs were not measured. */
  met: boolean | null;
  detail: string;
}

export interface BenchResults {
  schema: typeof RESULTS_SCHEMA;
  date: string;
  durationS: number;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; platform: string };
  options: Record<string, unknown>;
  contenders: ContenderStatus[];
  metrics: Metric[];
  capability:
    | { p50Us: number; p99Us: number; rules: number; scenario: string; rounds: CapabilityFigure[] }
    | { error: string }
    | null;
  targets: Target[];
  /** Failures of single jobs, for the record. */
  errors: { round: number; figure: string; contender: ContenderId; error: string }[];
}

const LABELS: Record<string, { label: string; unit: string; better: 'lower' | 'higher' }> = {
  p50: { label: 'sequential call p50', unit: 'µs', better: 'lower' },
  p99: { label: 'sequential call p99', unit: 'µs', better: 'lower' },
  'connect.one': { label: 'connect 1 server', unit: 'ms', better: 'lower' },
  'connect.many': { label: 'connect N servers in parallel', unit: 'ms', better: 'lower' },
  'connect.scale': { label: 'connect N / connect 1', unit: '×', better: 'lower' },
  reconnect: { label: 'reconnect after kill -9', unit: 'ms', better: 'lower' },
  'memory.rss': { label: 'RSS per stdio server', unit: 'KiB', better: 'lower' },
  'memory.heap': { label: 'JS heap per stdio server', unit: 'KiB', better: 'lower' },
  import: { label: 'import time', unit: 'ms', better: 'lower' },
};

/** Label, unit and direction of a figure id such as `latency.stdio-raw.p50` or `throughput.http.c16`. */
export function describe(id: string): { label: string; unit: string; better: 'lower' | 'higher' } {
  const parts = id.split('.');
  if (parts[0] === 'latency') {
    const l = LABELS[parts[2]!]!;
    return { ...l, label: `${l.label}, ${parts[1]}` };
  }
  if (parts[0] === 'cpu') {
    // The warm-up row: the sequential calls before the measured ones, while V8 still compiles the call path.
    const how =
      parts[2] === 'warmup'
        ? 'warm-up calls'
        : parts[2] === 'seq'
          ? 'sequential'
          : `concurrency ${parts[2]!.slice(1)}`;
    return { label: `client CPU per call, ${how}, ${parts[1]}`, unit: 'µs', better: 'lower' };
  }
  if (parts[0] === 'throughput') {
    return {
      label: `throughput at concurrency ${parts[2]!.slice(1)}, ${parts[1]}`,
      unit: 'calls/s',
      better: 'higher',
    };
  }
  const known = LABELS[id];
  if (known === undefined) throw new Error(`unknown figure ${id}`);
  return known;
}

/** Collects per-round values as the run goes, then builds the metrics. */
export class Recorder {
  readonly #values = new Map<string, Map<ContenderId, (number | null)[]>>();
  readonly #errors = new Map<string, Map<ContenderId, string>>();
  readonly #pooled = new Map<string, Map<ContenderId, number[]>>();
  readonly #order: string[] = [];
  readonly errors: BenchResults['errors'] = [];

  constructor(readonly rounds: number) {}

  #slot<T>(map: Map<string, Map<ContenderId, T>>, id: string, make: () => T, contender: ContenderId): T {
    if (!this.#order.includes(id)) this.#order.push(id);
    const byContender = map.get(id) ?? new Map<ContenderId, T>();
    map.set(id, byContender);
    const slot = byContender.get(contender) ?? make();
    byContender.set(contender, slot);
    return slot;
  }

  /** Records `value` of figure `id` for `contender` in round `round` (0-based). */
  record(id: string, contender: ContenderId, roundIndex: number, value: number): void {
    const list = this.#slot(
      this.#values,
      id,
      () => new Array<number | null>(this.rounds).fill(null),
      contender,
    );
    list[roundIndex] = value;
  }

  /** Adds samples whose overall median is the figure's value (reconnect: the median of all kills). */
  pool(id: string, contender: ContenderId, samples: readonly number[]): void {
    this.#slot(this.#pooled, id, () => [], contender).push(...samples);
  }

  /** Records why `contender` has no value for the figures `ids` this round. */
  fail(ids: readonly string[], contender: ContenderId, roundIndex: number, error: string): void {
    for (const id of ids) {
      const first = error.split('\n')[0]!.slice(0, 300);
      this.#slot(this.#errors, id, () => first, contender);
      this.errors.push({ round: roundIndex + 1, figure: id, contender, error: error.slice(0, 2000) });
    }
  }

  /** The metrics, in the order figures were first recorded. */
  metrics(): Metric[] {
    return this.#order.map((id) => {
      const { label, unit, better } = describe(id);
      const values: Metric['values'] = {};
      const base = this.#values.get(id)?.get(BASELINE);
      for (const contender of CONTENDER_IDS) {
        const rounds = this.#values.get(id)?.get(contender);
        const error = this.#errors.get(id)?.get(contender);
        if (rounds === undefined && error === undefined) continue;
        const list = rounds ?? new Array<number | null>(this.rounds).fill(null);
        const ratioRounds = list.map((v, i) => {
          const b = base?.[i];
          // A ratio needs two positive values (a memory delta can be 0 or below within its noise).
          if (v === null || b === null || b === undefined || b <= 0 || v <= 0) return null;
          return round(better === 'lower' ? v / b : b / v, 3);
        });
        const pooled = this.#pooled.get(id)?.get(contender);
        const present = list.filter((v): v is number => v !== null);
        const value = pooled !== undefined && pooled.length > 0 ? median(pooled) : median(present);
        const ratios = ratioRounds.filter((v): v is number => v !== null);
        values[contender] = {
          value: Number.isNaN(value) ? null : round(value, 2),
          ratio: ratios.length === 0 ? null : round(median(ratios), 3),
          rounds: list,
          ratioRounds,
          ...(present.length === 0 && error !== undefined ? { error } : {}),
        };
      }
      return { id, label, unit, better, values };
    });
  }
}

/** Checks the targets of issue 8 against the metrics. */
/** The peers issue 15 names for the CPU comparison (the SDK's own v2 client is measured, not compared). */
const CPU_PEERS: readonly ContenderId[] = ['langchain', 'mastra', 'ai-sdk'];

/** Whether Interlock's ratio is below each peer's on every row where both were measured. */
function aheadOf(id: string, text: string, rows: readonly Metric[], peers: readonly ContenderId[]): Target {
  const behind: string[] = [];
  let compared = 0;
  for (const m of rows) {
    const mine = m.values.interlock?.ratio ?? null;
    if (mine === null) continue;
    for (const peer of peers) {
      const theirs = m.values[peer]?.ratio ?? null;
      if (theirs === null) continue;
      compared++;
      if (!(mine < theirs)) behind.push(`${m.id}: ${peer} ${theirs}× vs Interlock ${mine}×`);
    }
  }
  return {
    id,
    text,
    met: compared === 0 ? null : behind.length === 0,
    detail:
      compared === 0
        ? 'no peer measured'
        : behind.length === 0
          ? `ahead in all ${compared} comparisons`
          : behind.join('; '),
  };
}

export function evaluateTargets(
  metrics: readonly Metric[],
  capability: BenchResults['capability'],
  peers: readonly ContenderId[],
): Target[] {
  const perCall = metrics.filter((m) => /^latency\..*\.p50$|^throughput\./.test(m.id));
  const ratioOf = (m: Metric, c: ContenderId) => m.values[c]?.ratio ?? null;
  const targets: Target[] = [];

  const within = perCall.map((m) => ({ m, r: ratioOf(m, 'interlock') }));
  const measured = within.filter((x) => x.r !== null);
  targets.push({
    id: 'per-call-overhead',
    text: "Interlock's full path within 1.05× the raw SDK per call, sequential and concurrent",
    met: measured.length === 0 ? null : measured.every((x) => x.r! <= 1.05),
    detail: within.map((x) => `${x.m.id} ${x.r === null ? 'n/a' : `${x.r}×`}`).join('; '),
  });

  targets.push(
    aheadOf('ahead-of-peers', 'Interlock ahead of every peer per call, in the same run', perCall, peers),
  );

  // Issue 15: client CPU per call within 1.10x the raw SDK on every row, and below the named peers' on each. The
  // rows measured after the warm-up calls decide it; the warm-up row is reported beside them, and decides nothing.
  const cpu = metrics.filter((m) => /^cpu\.[^.]+\.(seq|c\d+)$/.test(m.id));
  const cpuRatios = cpu.map((m) => ({ m, r: ratioOf(m, 'interlock') })).filter((x) => x.r !== null);
  targets.push({
    id: 'cpu-per-call',
    text: "Interlock's client CPU per call within 1.10× the raw SDK's, sequential and at each concurrency",
    met: cpuRatios.length === 0 ? null : cpuRatios.every((x) => x.r! <= 1.1),
    detail: cpuRatios.map((x) => `${x.m.id} ${x.r}×`).join('; ') || 'not measured',
  });
  targets.push(
    aheadOf(
      'cpu-ahead-of-peers',
      'Interlock below Mastra, LangChain and the AI SDK in client CPU per call, on every row of the same run',
      cpu,
      peers.filter((p) => CPU_PEERS.includes(p)),
    ),
  );

  const scale = metrics.find((m) => m.id === 'connect.scale')?.values.interlock?.value ?? null;
  targets.push({
    id: 'parallel-connect',
    text: 'Parallel connect of N slow servers within 1.5× the connect time of one',
    met: scale === null ? null : scale <= 1.5,
    detail: scale === null ? 'not measured' : `${scale}×`,
  });

  const p50 = capability !== null && 'p50Us' in capability ? capability.p50Us : null;
  targets.push({
    id: 'capability-check',
    text: 'Capability check p50 under 2 µs with 1 000 rules',
    met: p50 === null ? null : p50 < 2,
    detail:
      p50 === null ? 'not measured' : `p50 ${p50} µs, p99 ${(capability as { p99Us: number }).p99Us} µs`,
  });
  return targets;
}
