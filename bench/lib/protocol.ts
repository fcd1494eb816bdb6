/**
 * What the harness (`run.ts`) asks a contender process and what it answers, over the IPC channel. A
 * contender process runs one job and exits; a steered `calls` job runs the blocks the harness orders first.
 */
import type { ServerKind } from './contender.js';

/** The jobs a contender process can run. */
export type Job = 'calls' | 'connect' | 'memory' | 'reconnect' | 'warmup';

/** Arguments of a contender process (passed as `--job calls --server stdio-raw ...`). */
export interface WorkerArgs {
  job: Job;
  /** Which server the `calls` job uses; `connect`, `memory` and `reconnect` use `stdio-raw`. */
  server: ServerKind;
  /** URL of the Streamable HTTP server (server `http`). */
  url?: string | undefined;
  /** Measured sequential calls (the `warmup` job: calls per block). */
  calls: number;
  /** Unmeasured calls first. */
  warmup: number;
  /** Concurrency levels of the throughput figure; each runs `calls` calls. */
  concurrency: number[];
  /** Servers connected at once in the `connect` and `memory` jobs. */
  servers: number;
  /** How long each server waits before serving, in the `connect` job. */
  delayMs: number;
  /** How many times the `connect` job connects one server and then `servers` servers. */
  reps: number;
  /** How many kills the `reconnect` job makes. */
  kills: number;
  /** How many blocks of `calls` calls the `warmup` job measures. */
  blocks: number;
  /**
   * The `calls` job takes its orders from the harness ({@link SteerCommand}) instead of running straight through,
   * so that the harness can interleave the contenders' measured blocks.
   */
  steered: boolean;
}

/**
 * An order from the harness to a steered `calls` process. The process says `ready` ({@link SteerAnswer}) once it has
 * connected and listens for orders; the harness sends none before. It answers each `warmup` and `block` with `done`
 * once its calls are done, and `finish` with its {@link WorkerResult}, totals of all its blocks.
 * - `warmup`: `calls` of the unmeasured calls before a figure (the `warmup` count, in turns); the CPU of those before
 *   the sequential figure is the warm-up row;
 * - `block`: `calls` measured calls, one after the other (each call's latency kept) or `concurrency` in flight.
 */
export type SteerCommand =
  | { op: 'warmup'; concurrency: number | 'sequential'; calls: number }
  | { op: 'block'; concurrency: number | 'sequential'; calls: number }
  | { op: 'finish' };

/** What a steered process says before its result: that it takes orders now, or that it carried one out. */
export interface SteerAnswer {
  op: 'ready' | 'done';
}

/** Latency of sequential calls, in microseconds. */
export interface LatencyResult {
  n: number;
  p50Us: number;
  p99Us: number;
  meanUs: number;
  /** CPU time of this (client) process per call: little disturbed by other load on the machine. */
  cpuUsPerCall: number;
}

/**
 * The sequential warm-up calls that come before the measured ones (the first calls after the one that checks the
 * answer): CPU per call while V8 still compiles the client's call path. Reported as its own figure so that the
 * steady-state figures do not hide it.
 */
export interface WarmupResult {
  n: number;
  /** CPU time of this (client) process per call, compiler threads included. */
  cpuUsPerCall: number;
}

/** Calls per second with `concurrency` calls in flight. */
export interface ThroughputResult {
  concurrency: number;
  n: number;
  callsPerSec: number;
  /** CPU time of this (client) process per call. */
  cpuUsPerCall: number;
}

export type WorkerResult =
  | {
      ok: true;
      job: 'calls';
      /** Absent when the run asked for no warm-up calls. */
      warmup?: WarmupResult | undefined;
      latency: LatencyResult;
      throughput: ThroughputResult[];
      notes: Notes;
    }
  | { ok: true; job: 'connect'; oneMs: number[]; manyMs: number[]; servers: number; notes: Notes }
  | {
      ok: true;
      job: 'memory';
      rssPerServerKiB: number;
      heapPerServerKiB: number;
      servers: number;
      notes: Notes;
    }
  | { ok: true; job: 'reconnect'; samplesMs: number[]; notes: Notes }
  /** The `warmup` job: CPU per call of each block of `calls` sequential calls, from the first call on. */
  | { ok: true; job: 'warmup'; blockCalls: number; cpuUsPerCall: number[]; notes: Notes }
  | { ok: false; job: Job; error: string; unsupported?: boolean };

export type Notes = Record<string, string | number | boolean>;
