/**
 * The body of a contender process (issue 8): parses the harness's flags, runs one job against the echo
 * servers with the given adapter, and answers with one {@link WorkerResult} over IPC (or on stdout when
 * run by hand), then exits. Nothing here is specific to one library.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { ContenderAdapter, ServerKind, ServerSpec, Session } from './contender.js';
import { ECHO_RAW, ECHO_SDK } from './paths.js';
import type {
  Job,
  LatencyResult,
  Notes,
  SteerCommand,
  ThroughputResult,
  WarmupResult,
  WorkerArgs,
  WorkerResult,
} from './protocol.js';
import { quantile, round } from './stats.js';
import { reportThreads, threadTimes } from './threads.js';

/** The text every call echoes. */
export const ECHO_TEXT = 'The quick brown fox jumps over the lazy dog';
/** How long the reconnect job waits for the first good call after a kill before it gives up. */
export const RECONNECT_BUDGET_MS = 5_000;
/** Name of the one server of the `calls` and `reconnect` jobs. */
export const BENCH_SERVER = 'bench';

const JOBS: readonly Job[] = ['calls', 'connect', 'memory', 'reconnect', 'warmup'];
const KINDS: readonly ServerKind[] = ['stdio-raw', 'stdio-sdk', 'http'];

/** Parses a contender process's flags (the harness passes all of them). */
export function parseWorkerArgs(argv: readonly string[]): WorkerArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      job: { type: 'string', default: 'calls' },
      server: { type: 'string', default: 'stdio-raw' },
      url: { type: 'string' },
      calls: { type: 'string', default: '3000' },
      warmup: { type: 'string', default: '6000' },
      concurrency: { type: 'string', default: '16,64' },
      servers: { type: 'string', default: '10' },
      'delay-ms': { type: 'string', default: '300' },
      reps: { type: 'string', default: '3' },
      kills: { type: 'string', default: '20' },
      blocks: { type: 'string', default: '8' },
      steered: { type: 'boolean', default: false },
    },
  });
  const int = (name: string, raw: string, min: number): number => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min)
      throw new Error(`--${name} must be an integer >= ${min}, got '${raw}'`);
    return n;
  };
  const job = values.job as Job;
  if (!JOBS.includes(job)) throw new Error(`--job must be one of ${JOBS.join(', ')}`);
  const server = values.server as ServerKind;
  if (!KINDS.includes(server)) throw new Error(`--server must be one of ${KINDS.join(', ')}`);
  if (server === 'http' && job === 'calls' && values.url === undefined)
    throw new Error('--server http needs --url');
  return {
    job,
    server,
    url: values.url,
    calls: int('calls', values.calls, 1),
    warmup: int('warmup', values.warmup, 0),
    concurrency:
      values.concurrency === ''
        ? []
        : values.concurrency.split(',').map((c) => int('concurrency', c.trim(), 1)),
    servers: int('servers', values.servers, 1),
    delayMs: int('delay-ms', values['delay-ms'], 0),
    reps: int('reps', values.reps, 1),
    kills: int('kills', values.kills, 1),
    blocks: int('blocks', values.blocks, 1),
    steered: values.steered,
  };
}

/** A stdio server spec running `bench/servers/echo-*.mjs` with this Node. */
export function stdioSpec(
  name: string,
  kind: 'stdio-raw' | 'stdio-sdk',
  options: { delayMs?: number; pidDir?: string } = {},
): ServerSpec {
  const args = [kind === 'stdio-raw' ? ECHO_RAW : ECHO_SDK];
  if (options.delayMs !== undefined && options.delayMs > 0) args.push('--delay-ms', String(options.delayMs));
  if (options.pidDir !== undefined) args.push('--pid-dir', options.pidDir);
  return { name, transport: 'stdio', command: process.execPath, args };
}

/** Pids the servers wrote to `dir` (one empty file per pid). */
function pidsIn(dir: string): number[] {
  return readdirSync(dir)
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until every process that wrote to `dir` has exited, so it does not compete with the next step. */
async function waitGone(dir: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (pidsIn(dir).some(alive) && Date.now() < deadline) await delay(5);
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  promise.catch(() => {});
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function checkedCall(session: Session, server: string, text = ECHO_TEXT): Promise<void> {
  const answer = await session.call(server, text);
  if (answer !== text) throw new Error(`The echo tool answered ${JSON.stringify(answer)}, not the text sent`);
}

function serverFor(args: WorkerArgs): ServerSpec {
  if (args.server === 'http') return { name: BENCH_SERVER, transport: 'http', url: args.url! };
  return stdioSpec(BENCH_SERVER, args.server);
}

/** Sequential latency, then throughput at each concurrency level. */
async function jobCalls(adapter: ContenderAdapter, args: WorkerArgs): Promise<WorkerResult> {
  const session = await adapter.connect([serverFor(args)]);
  try {
    await checkedCall(session, BENCH_SERVER);
    if (args.steered) return await steeredCalls(adapter, session);
    const warm0 = process.cpuUsage();
    for (let i = 0; i < args.warmup; i++) await session.call(BENCH_SERVER, ECHO_TEXT);
    const warm = process.cpuUsage(warm0);
    const warmup: WarmupResult | undefined =
      args.warmup === 0
        ? undefined
        : { n: args.warmup, cpuUsPerCall: round((warm.user + warm.system) / args.warmup, 2) };
    const times = new Array<number>(args.calls);
    const threads0 = threadTimes('sequential');
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < args.calls; i++) {
      const t0 = performance.now();
      await session.call(BENCH_SERVER, ECHO_TEXT);
      times[i] = (performance.now() - t0) * 1000;
    }
    const cpu = process.cpuUsage(cpu0);
    reportThreads('sequential', threads0, args.calls);
    const latency: LatencyResult = {
      n: args.calls,
      cpuUsPerCall: round((cpu.user + cpu.system) / args.calls, 2),
      p50Us: round(quantile(times, 0.5), 1),
      p99Us: round(quantile(times, 0.99), 1),
      meanUs: round(times.reduce((a, b) => a + b, 0) / times.length, 1),
    };
    const throughput: ThroughputResult[] = [];
    for (const concurrency of args.concurrency) {
      await concurrently(session, args.warmup, concurrency);
      const threads1 = threadTimes(`concurrency ${concurrency}`);
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await concurrently(session, args.calls, concurrency);
      const seconds = (performance.now() - t0) / 1000;
      const c = process.cpuUsage(c0);
      reportThreads(`concurrency ${concurrency}`, threads1, args.calls);
      throughput.push({
        concurrency,
        n: args.calls,
        callsPerSec: round(args.calls / seconds, 1),
        cpuUsPerCall: round((c.user + c.system) / args.calls, 2),
      });
    }
    await checkedCall(session, BENCH_SERVER);
    return { ok: true, job: 'calls', warmup, latency, throughput, notes: adapter.notes?.(session) ?? {} };
  } finally {
    await session.close();
  }
}

/**
 * The `calls` job as the harness steers it: the same calls and figures as {@link jobCalls}, but each measured block
 * runs when the harness orders it, so that the harness can interleave the contenders' blocks (one contender's
 * block, then the next's...). A spell of load from elsewhere on the machine then falls on every contender's blocks
 * alike instead of on whichever contender was running. Each figure is the total over this process's blocks: CPU per
 * call is the process's CPU from the start of the figure's first block to the end of its last ({@link FigureSpan})
 * over all the blocks' calls, a throughput is all their calls over all their time, and the latency quantiles are
 * over every sequential call.
 */
async function steeredCalls(adapter: ContenderAdapter, session: Session): Promise<WorkerResult> {
  if (process.send === undefined) throw new Error('--steered needs an IPC channel to the harness');
  const commands = steerCommands();
  let warming: FigureSpan | undefined;
  const times: number[] = [];
  const figures = new Map<number | 'sequential', FigureSpan>();
  const answer = (op: 'ready' | 'done') =>
    new Promise<void>((resolve) => process.send!({ op }, undefined, {}, () => resolve()));
  // Node drops a message that finds no listener: the harness sends its first order once this has gone out.
  await answer('ready');
  for (;;) {
    const command = await commands.next();
    if (command.op === 'finish') break;
    if (command.op === 'warmup' && command.concurrency !== 'sequential') {
      await concurrently(session, command.calls, command.concurrency);
    } else if (command.op === 'warmup') {
      // The warm-up row spans its turns as a figure spans its blocks.
      warming ??= { calls: 0, ms: 0, cpuFirstUs: cpuUs(), cpuLastUs: 0, blocksCpuUs: 0 };
      const c0 = cpuUs();
      for (let i = 0; i < command.calls; i++) await session.call(BENCH_SERVER, ECHO_TEXT);
      warming.cpuLastUs = cpuUs();
      warming.blocksCpuUs += warming.cpuLastUs - c0;
      warming.calls += command.calls;
    } else {
      let figure = figures.get(command.concurrency);
      if (figure === undefined) {
        figure = { calls: 0, ms: 0, cpuFirstUs: cpuUs(), cpuLastUs: 0, blocksCpuUs: 0 };
        figures.set(command.concurrency, figure);
      }
      const t0 = performance.now();
      const c0 = cpuUs();
      if (command.concurrency === 'sequential') {
        for (let i = 0; i < command.calls; i++) {
          const t = performance.now();
          await session.call(BENCH_SERVER, ECHO_TEXT);
          times.push((performance.now() - t) * 1000);
        }
      } else {
        await concurrently(session, command.calls, command.concurrency);
      }
      figure.ms += performance.now() - t0;
      figure.cpuLastUs = cpuUs();
      figure.blocksCpuUs += figure.cpuLastUs - c0;
      figure.calls += command.calls;
    }
    await answer('done');
  }
  commands.close();
  const sequential = figures.get('sequential');
  if (sequential === undefined) throw new Error('the harness ordered no sequential block');
  await checkedCall(session, BENCH_SERVER);
  const cpuPerCall = (figure: FigureSpan) => round((figure.cpuLastUs - figure.cpuFirstUs) / figure.calls, 2);
  const warmup: WarmupResult | undefined =
    warming === undefined || warming.calls === 0
      ? undefined
      : { n: warming.calls, cpuUsPerCall: cpuPerCall(warming) };
  return {
    ok: true,
    job: 'calls',
    warmup,
    latency: {
      n: times.length,
      cpuUsPerCall: cpuPerCall(sequential),
      p50Us: round(quantile(times, 0.5), 1),
      p99Us: round(quantile(times, 0.99), 1),
      meanUs: round(times.reduce((a, b) => a + b, 0) / times.length, 1),
    },
    throughput: [...figures]
      .filter((entry): entry is [number, FigureSpan] => entry[0] !== 'sequential')
      .map(([concurrency, figure]) => ({
        concurrency,
        n: figure.calls,
        callsPerSec: round(figure.calls / (figure.ms / 1000), 1),
        cpuUsPerCall: cpuPerCall(figure),
      })),
    notes: { ...adapter.notes?.(session), ...betweenBlocks(figures) },
  };
}

/**
 * For each figure, the CPU per call the process spent between its blocks (`between.sequential`, `between.c16`...):
 * part of the figure's CPU, shown apart so that a contender whose cost lands between blocks stands out.
 */
function betweenBlocks(figures: Map<number | 'sequential', FigureSpan>): Notes {
  const notes: Notes = {};
  for (const [level, figure] of figures) {
    const key = level === 'sequential' ? 'between.sequential' : `between.c${level}`;
    notes[key] = round((figure.cpuLastUs - figure.cpuFirstUs - figure.blocksCpuUs) / figure.calls, 2);
  }
  return notes;
}

/**
 * One figure of a steered process: its calls and the time they took, block by block, and the process's CPU time
 * (user and system, every thread) at the start of its first block and at the end of its latest. The CPU of a
 * figure is the whole span between the two, the time while the other contenders ran their blocks included: what a
 * block leaves for later (a garbage collection finished on a helper thread, a compilation, V8's memory reducer
 * once the process goes quiet) would escape a count taken inside the blocks alone, and it is the process's own cost.
 */
interface FigureSpan {
  calls: number;
  ms: number;
  cpuFirstUs: number;
  cpuLastUs: number;
  /** The CPU inside the blocks alone. */
  blocksCpuUs: number;
}

/** The CPU time (user and system) of this process so far, in µs. */
function cpuUs(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/** The harness's orders, one at a time; an IPC channel that closes reads as `finish`. */
function steerCommands(): { next(): Promise<SteerCommand>; close(): void } {
  const queue: SteerCommand[] = [];
  let waiting: ((command: SteerCommand) => void) | undefined;
  const push = (command: SteerCommand) => {
    if (waiting === undefined) queue.push(command);
    else {
      const resolve = waiting;
      waiting = undefined;
      resolve(command);
    }
  };
  const onMessage = (message: unknown) => push(message as SteerCommand);
  const onDisconnect = () => push({ op: 'finish' });
  process.on('message', onMessage);
  process.on('disconnect', onDisconnect);
  return {
    next: () =>
      queue.length > 0
        ? Promise.resolve(queue.shift()!)
        : new Promise<SteerCommand>((resolve) => {
            waiting = resolve;
          }),
    close() {
      process.off('message', onMessage);
      process.off('disconnect', onDisconnect);
    },
  };
}

/** Runs `total` calls with `concurrency` of them in flight at any time. */
async function concurrently(session: Session, total: number, concurrency: number): Promise<void> {
  let issued = 0;
  const lane = async () => {
    while (issued < total) {
      issued++;
      await session.call(BENCH_SERVER, ECHO_TEXT);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, lane));
}

/** Connect time of one slow server, then of `servers` slow servers at once, `reps` times. */
async function jobConnect(adapter: ContenderAdapter, args: WorkerArgs): Promise<WorkerResult> {
  const oneMs: number[] = [];
  const manyMs: number[] = [];
  const connectOnce = async (count: number): Promise<number> => {
    const dir = mkdtempSync(join(tmpdir(), 'interlock-bench-pids-'));
    try {
      const specs = Array.from({ length: count }, (_, i) =>
        stdioSpec(`s${i}`, 'stdio-raw', { delayMs: args.delayMs, pidDir: dir }),
      );
      const t0 = performance.now();
      const session = await adapter.connect(specs);
      const ms = performance.now() - t0;
      try {
        // Outside the timing: every server really answers.
        for (const spec of specs) await checkedCall(session, spec.name);
      } finally {
        await session.close();
        await waitGone(dir);
      }
      return ms;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  for (let rep = 0; rep < args.reps; rep++) {
    oneMs.push(round(await connectOnce(1), 1));
    manyMs.push(round(await connectOnce(args.servers), 1));
  }
  return { ok: true, job: 'connect', oneMs, manyMs, servers: args.servers, notes: {} };
}

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect === undefined) throw new Error('The memory job needs node --expose-gc');
  collect();
  collect();
}

/**
 * Resident memory (and JS heap) this process gains per connected stdio server: the cost of one more server,
 * the servers' own memory excluded. One server is connected and called first, so what a library sets up
 * once (lazy imports, schema compilers) is not counted; what the app builds once (Interlock's policy) is
 * excluded too, through `prepare`.
 */
async function jobMemory(adapter: ContenderAdapter, args: WorkerArgs): Promise<WorkerResult> {
  const dir = mkdtempSync(join(tmpdir(), 'interlock-bench-pids-'));
  const sessions: Session[] = [];
  try {
    const specs = Array.from({ length: args.servers }, (_, i) =>
      stdioSpec(`s${i}`, 'stdio-raw', { pidDir: dir }),
    );
    adapter.prepare?.(specs);
    const warm = await adapter.connect([stdioSpec('warm', 'stdio-raw', { pidDir: dir })]);
    sessions.push(warm);
    for (let i = 0; i < 20; i++) await checkedCall(warm, 'warm');
    gc();
    await delay(50);
    gc();
    const before = process.memoryUsage();
    const session = await adapter.connect(specs);
    sessions.push(session);
    for (const spec of specs) await checkedCall(session, spec.name);
    gc();
    await delay(50);
    gc();
    const after = process.memoryUsage();
    return {
      ok: true,
      job: 'memory',
      servers: args.servers,
      rssPerServerKiB: round((after.rss - before.rss) / 1024 / args.servers, 1),
      heapPerServerKiB: round((after.heapUsed - before.heapUsed) / 1024 / args.servers, 1),
      notes: {},
    };
  } finally {
    for (const session of sessions) await session.close();
    await waitGone(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Time from `kill -9` of the stdio server to the first call that succeeds again, the client being called
 * every 2 ms meanwhile (each probe bounded to 1 s). `kills` times.
 */
async function jobReconnect(adapter: ContenderAdapter, args: WorkerArgs): Promise<WorkerResult> {
  if (adapter.reconnect.kind === 'none') {
    return { ok: false, job: 'reconnect', unsupported: true, error: adapter.reconnect.reason };
  }
  const dir = mkdtempSync(join(tmpdir(), 'interlock-bench-pids-'));
  const killed = new Set<number>();
  try {
    const session = await adapter.connect([stdioSpec(BENCH_SERVER, 'stdio-raw', { pidDir: dir })]);
    const samplesMs: number[] = [];
    try {
      for (let i = 0; i < 50; i++) await checkedCall(session, BENCH_SERVER);
      for (let k = 0; k < args.kills; k++) {
        const live = pidsIn(dir).filter((pid) => !killed.has(pid) && alive(pid));
        if (live.length !== 1)
          throw new Error(`Expected one live server before kill ${k + 1}, found ${live.length}`);
        const pid = live[0]!;
        killed.add(pid);
        const t0 = performance.now();
        process.kill(pid, 'SIGKILL');
        for (;;) {
          const elapsed = performance.now() - t0;
          if (elapsed > RECONNECT_BUDGET_MS) {
            return {
              ok: false,
              job: 'reconnect',
              unsupported: true,
              error: `no call succeeded within ${RECONNECT_BUDGET_MS} ms after kill -9: it does not reconnect by itself`,
            };
          }
          try {
            await withTimeout(session.call(BENCH_SERVER, ECHO_TEXT), 1_000, 'a probe call');
            break;
          } catch {
            await delay(2);
          }
        }
        samplesMs.push(round(performance.now() - t0, 1));
        for (let i = 0; i < 20; i++) await checkedCall(session, BENCH_SERVER);
        await delay(20);
      }
    } finally {
      await withTimeout(session.close(), 5_000, 'close').catch(() => {});
    }
    return { ok: true, job: 'reconnect', samplesMs, notes: {} };
  } finally {
    for (const pid of pidsIn(dir)) if (alive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Warm-up: `blocks` blocks of `calls` sequential calls each, from the first call after connecting, and the CPU per
 * call of each block. Shows how long a contender's path takes to become cheap (V8 compiles hot functions after
 * some hundreds of calls, on a background thread whose CPU this process pays). With BENCH_BLOCK_MARKERS set, a line
 * `@@block N` goes to stdout after each block, so a `--trace-opt` log can be cut by block (bench/warmup.ts).
 */
async function jobWarmup(adapter: ContenderAdapter, args: WorkerArgs): Promise<WorkerResult> {
  const session = await adapter.connect([serverFor(args)]);
  const markers = process.env.BENCH_BLOCK_MARKERS !== undefined;
  try {
    const cpuUsPerCall: number[] = [];
    for (let block = 0; block < args.blocks; block++) {
      const c0 = process.cpuUsage();
      for (let i = 0; i < args.calls; i++) await session.call(BENCH_SERVER, ECHO_TEXT);
      const c = process.cpuUsage(c0);
      cpuUsPerCall.push(round((c.user + c.system) / args.calls, 2));
      if (markers) process.stdout.write(`@@block ${block}\n`);
    }
    await checkedCall(session, BENCH_SERVER);
    return {
      ok: true,
      job: 'warmup',
      blockCalls: args.calls,
      cpuUsPerCall,
      notes: adapter.notes?.(session) ?? {},
    };
  } finally {
    await session.close();
  }
}

const RUNNERS: Record<Job, (adapter: ContenderAdapter, args: WorkerArgs) => Promise<WorkerResult>> = {
  calls: jobCalls,
  connect: jobConnect,
  memory: jobMemory,
  reconnect: jobReconnect,
  warmup: jobWarmup,
};

/** Runs the job the flags name with `adapter`, reports the result, and exits the process. */
export async function runContender(adapter: ContenderAdapter): Promise<never> {
  let result: WorkerResult;
  let job: Job = 'calls';
  try {
    const args = parseWorkerArgs(process.argv.slice(2));
    job = args.job;
    result = await RUNNERS[args.job](adapter, args);
  } catch (err) {
    const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
    result = { ok: false, job, error };
  }
  await report(result);
  // Some libraries leave timers or exit hooks behind: the job is done, so the process ends here.
  process.exit(0);
}

function report(result: WorkerResult): Promise<void> {
  if (process.send === undefined) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    process.send!(result, undefined, {}, () => resolve());
  });
}
