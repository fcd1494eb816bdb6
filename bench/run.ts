/**
 * The benchmark harness of issue 8: Interlock side by side with the raw MCP SDK client and the peers
 * (`@langchain/mcp-adapters`, `@mastra/mcp`, `@ai-sdk/mcp`), on the same echo servers.
 *
 *   npm run bench -- [--rounds 3] [--calls 3000] [--contenders sdk,interlock,...] [--figures ...]
 *
 * Every contender runs each job in its own process; contenders take turns within a job, in an order that
 * rotates every round; ratios to the raw SDK are taken within a round. The call figures are measured in blocks that
 * alternate between the contenders' processes (`--blocks`), so that a spell of load from elsewhere on the machine
 * falls on all of them alike. Prints a Markdown table, writes
 * `bench/results/latest.json` (+ `latest.md`) and the chart `docs/assets/bench-ratios.svg`. `--help` lists
 * the flags. Peers missing from bench/node_modules are skipped with the reason (`npm ci --prefix bench`).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { ServerKind } from './lib/contender.js';
import { callSchedule, rotate } from './lib/interleave.js';
import { RESULTS_FILE, SVG_FILE } from './lib/paths.js';
import {
  CONTENDER_IDS,
  CONTENDERS,
  type ContenderId,
  installedVersion,
  unavailableReason,
} from './lib/peers.js';
import {
  buildSpecifier,
  type CapabilityFigure,
  ensureInterlockBuild,
  type HttpServer,
  importTimeMs,
  runCapabilityCheck,
  runWorker,
  type SteeredWorker,
  startHttpServer,
  startSteeredWorker,
  WORKER_TIMEOUT_MS,
} from './lib/processes.js';
import type { SteerCommand, WorkerArgs, WorkerResult } from './lib/protocol.js';
import { summary } from './lib/report.js';
import {
  BASELINE,
  type BenchResults,
  type ContenderStatus,
  evaluateTargets,
  RESULTS_SCHEMA,
  Recorder,
} from './lib/results.js';
import { median, round } from './lib/stats.js';
import { ratioChart } from './lib/svg.js';

const FIGURES = [
  'latency',
  'throughput',
  'connect',
  'memory',
  'reconnect',
  'import',
  'capability',
  'gateway',
] as const;
type Figure = (typeof FIGURES)[number];
const TRANSPORTS: readonly ServerKind[] = ['stdio-raw', 'stdio-sdk', 'http'];

const HELP = `Usage: npm run bench -- [flags]

  --rounds N          rounds; ratios are taken within a round               (default 3)
  --calls N           measured sequential calls, and calls per concurrency  (default 3000)
  --warmup N          unmeasured calls before each measured block           (default 6000)
                      (those before the sequential block: the warm-up row)
  --concurrency L     concurrency levels of the throughput figure           (default 16,64)
  --blocks N          each call figure's calls are measured in N blocks per (default 10)
                      contender, the contenders' blocks taking turns
  --transports L      servers for the call figures: stdio-raw,stdio-sdk,http (default all)
  --servers N         servers connected at once (connect, memory)           (default 10)
  --delay-ms N        start-up delay of each server in the connect figure   (default 300)
  --reps N            connects of 1 and of N servers per round              (default 3)
  --kills N           kill -9 samples of the reconnect figure, all rounds   (default 20)
  --import-reps N     fresh-process imports per contender per round         (default 5)
  --contenders L      ${CONTENDER_IDS.join(',')} (sdk is always run: it is the baseline)
  --figures L         ${FIGURES.join(',')} (default all)
                      gateway: bench/gateway.ts (interlock serve as deployed, its own
                      results in bench/results/gateway.json; --rounds is passed on)
  --out FILE          results JSON (a .md with the table is written beside it) (default bench/results/latest.json)
  --svg FILE          ratio chart, or 'none'                                (default docs/assets/bench-ratios.svg)
  --quiet             no progress lines on stderr
  --render FILE       measure nothing: print the table of a results file and redraw the chart (--svg)
`;

interface Options {
  render: string | undefined;
  rounds: number;
  calls: number;
  warmup: number;
  concurrency: number[];
  blocks: number;
  transports: ServerKind[];
  servers: number;
  delayMs: number;
  reps: number;
  kills: number;
  importReps: number;
  contenders: ContenderId[];
  figures: Figure[];
  out: string;
  svg: string | undefined;
  quiet: boolean;
}

function list<T extends string>(raw: string, allowed: readonly T[], flag: string): T[] {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const item of items) {
    if (!allowed.includes(item as T))
      throw new Error(`--${flag}: '${item}' is not one of ${allowed.join(', ')}`);
  }
  return items as T[];
}

function parseOptions(argv: string[]): Options | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      rounds: { type: 'string', default: '3' },
      calls: { type: 'string', default: '3000' },
      warmup: { type: 'string', default: '6000' },
      concurrency: { type: 'string', default: '16,64' },
      blocks: { type: 'string', default: '10' },
      transports: { type: 'string', default: TRANSPORTS.join(',') },
      servers: { type: 'string', default: '10' },
      'delay-ms': { type: 'string', default: '300' },
      reps: { type: 'string', default: '3' },
      kills: { type: 'string', default: '20' },
      'import-reps': { type: 'string', default: '5' },
      contenders: { type: 'string', default: CONTENDER_IDS.join(',') },
      figures: { type: 'string', default: FIGURES.join(',') },
      out: { type: 'string', default: RESULTS_FILE },
      svg: { type: 'string', default: SVG_FILE },
      quiet: { type: 'boolean', default: false },
      render: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return undefined;
  const int = (flag: string, raw: string, min: number) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min)
      throw new Error(`--${flag} must be an integer >= ${min}, got '${raw}'`);
    return n;
  };
  const contenders = list(values.contenders, CONTENDER_IDS, 'contenders');
  if (!contenders.includes(BASELINE)) contenders.unshift(BASELINE);
  return {
    render: values.render === undefined ? undefined : resolve(values.render),
    rounds: int('rounds', values.rounds, 1),
    calls: int('calls', values.calls, 1),
    warmup: int('warmup', values.warmup, 0),
    concurrency: values.concurrency.split(',').map((c) => int('concurrency', c.trim(), 1)),
    blocks: int('blocks', values.blocks, 1),
    transports: list(values.transports, TRANSPORTS, 'transports'),
    servers: int('servers', values.servers, 2),
    delayMs: int('delay-ms', values['delay-ms'], 0),
    reps: int('reps', values.reps, 1),
    kills: int('kills', values.kills, 1),
    importReps: int('import-reps', values['import-reps'], 1),
    contenders: CONTENDER_IDS.filter((id) => contenders.includes(id)),
    figures: list(values.figures, FIGURES, 'figures'),
    out: resolve(values.out),
    svg: values.svg === 'none' ? undefined : resolve(values.svg),
    quiet: values.quiet,
  };
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (options === undefined) {
    process.stdout.write(HELP);
    return;
  }
  if (options.render !== undefined) {
    const results = JSON.parse(readFileSync(options.render, 'utf8')) as BenchResults;
    process.stdout.write(`${summary(results)}\n`);
    if (options.svg !== undefined) writeFileSync(options.svg, ratioChart(results));
    return;
  }
  const started = performance.now();
  const log = (line: string) => {
    if (!options.quiet) process.stderr.write(`${line}\n`);
  };
  const has = (f: Figure) => options.figures.includes(f);
  if (options.figures.every((f) => f === 'gateway')) {
    runGatewayBench(options);
    return;
  }

  const statuses: ContenderStatus[] = options.contenders.map((id) => {
    const info = CONTENDERS[id];
    const reason = unavailableReason(info);
    return {
      id,
      label: info.label,
      pkg: info.pkg,
      version: installedVersion(info),
      status: reason === undefined ? 'ran' : 'skipped',
      ...(reason === undefined ? {} : { reason }),
    };
  });
  const ran = statuses.filter((s) => s.status === 'ran').map((s) => s.id);
  for (const s of statuses) if (s.status === 'skipped') log(`skipping ${s.label}: ${s.reason}`);

  const recorder = new Recorder(options.rounds);
  const killsPerRound = Math.ceil(options.kills / options.rounds);
  const base: WorkerArgs = {
    job: 'calls',
    server: 'stdio-raw',
    calls: options.calls,
    warmup: options.warmup,
    concurrency: has('throughput') ? options.concurrency : [],
    servers: options.servers,
    delayMs: options.delayMs,
    reps: options.reps,
    kills: killsPerRound,
    blocks: 1,
    steered: false,
  };
  const jobs: WorkerArgs[] = [];
  if (has('latency') || has('throughput')) {
    for (const server of options.transports) jobs.push({ ...base, job: 'calls', server });
  }
  if (has('connect')) jobs.push({ ...base, job: 'connect' });
  if (has('memory')) jobs.push({ ...base, job: 'memory' });
  if (has('reconnect')) jobs.push({ ...base, job: 'reconnect' });

  let interlockEntry: string | undefined;
  if (ran.includes('interlock')) {
    // Once here, so contender processes find it built (they run the build, not the sources).
    log('building Interlock (tsc -> bench/node_modules/.interlock-build) unless it is up to date...');
    interlockEntry = ensureInterlockBuild();
  }
  const capabilityRounds: CapabilityFigure[] = [];
  let capabilityError: string | undefined;

  for (let r = 0; r < options.rounds; r++) {
    const order = rotate(ran, r);
    log(`round ${r + 1}/${options.rounds}: ${order.join(' ')}`);
    for (const job of jobs) {
      if (job.job === 'calls') {
        for (const [contender, result] of await interleavedCalls(order, job, options.blocks)) {
          record(recorder, contender, r, job, result, has);
          log(`  calls ${job.server} ${contender}: ${brief(result)}`);
        }
        continue;
      }
      for (const contender of order) {
        const result = await runWorker(contender, job);
        record(recorder, contender, r, job, result, has);
        log(`  ${job.job} ${contender}: ${brief(result)}`);
      }
    }
    if (has('import')) {
      const samples = new Map<ContenderId, number[]>();
      for (let rep = 0; rep < options.importReps; rep++) {
        for (const contender of order) {
          const specs =
            contender === 'interlock'
              ? [buildSpecifier(join(dirname(interlockEntry!), 'interop', 'index.js'))]
              : CONTENDERS[contender].importSpecifiers;
          try {
            const ms = await importTimeMs(specs);
            samples.set(contender, [...(samples.get(contender) ?? []), ms]);
          } catch (err) {
            recorder.fail(['import'], contender, r, (err as Error).message);
          }
        }
      }
      for (const [contender, ms] of samples) recorder.record('import', contender, r, round(median(ms), 2));
      log(`  import: ${[...samples].map(([c, ms]) => `${c} ${median(ms).toFixed(1)} ms`).join(', ')}`);
    }
    if (has('capability') && ran.includes('interlock')) {
      try {
        const figure = await runCapabilityCheck();
        capabilityRounds.push(figure);
        log(`  capability check: p50 ${figure.p50Us} µs, p99 ${figure.p99Us} µs`);
      } catch (err) {
        capabilityError = (err as Error).message;
        log(`  capability check failed: ${capabilityError}`);
      }
    }
  }

  const metrics = recorder
    .metrics()
    .map((m) => ({ ...m, label: m.label.replace(' N ', ` ${options.servers} `) }));
  const capability: BenchResults['capability'] =
    capabilityRounds.length > 0
      ? {
          p50Us: round(median(capabilityRounds.map((c) => c.p50Us)), 3),
          p99Us: round(median(capabilityRounds.map((c) => c.p99Us)), 3),
          rules: capabilityRounds[0]!.rules,
          scenario: capabilityRounds[0]!.scenario,
          rounds: capabilityRounds,
        }
      : capabilityError !== undefined
        ? { error: capabilityError }
        : null;
  const results: BenchResults = {
    schema: RESULTS_SCHEMA,
    date: new Date().toISOString(),
    durationS: Math.round((performance.now() - started) / 1000),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      platform: `${process.platform}/${process.arch}`,
    },
    options: { ...options, out: undefined, svg: undefined, quiet: undefined, killsPerRound },
    contenders: statuses,
    metrics,
    capability,
    targets: evaluateTargets(
      metrics,
      capability,
      ran.filter((id) => id !== BASELINE && id !== 'interlock'),
    ),
    errors: recorder.errors,
  };
  const text = summary(results);
  process.stdout.write(`${text}\n`);
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(options.out.replace(/\.json$/, '.md'), `${text}\n`);
  log(`wrote ${options.out}`);
  if (options.svg !== undefined) {
    mkdirSync(dirname(options.svg), { recursive: true });
    writeFileSync(options.svg, ratioChart(results));
    log(`wrote ${options.svg}`);
  }
  if (has('gateway')) runGatewayBench(options);
}

/** The gateway figure: bench/gateway.ts in a process of its own (it starts the upstream and the gateways). */
function runGatewayBench(options: Options): void {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'gateway.ts');
  const args = ['--import', 'tsx', script, '--rounds', String(options.rounds)];
  const run = spawnSync(process.execPath, options.quiet ? [...args, '--quiet'] : args, { stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`bench/gateway.ts failed (${run.status ?? run.signal})`);
}

/**
 * One `calls` job for every contender of `order` at once, steered: each contender's process (and its server)
 * starts and connects, one after the other; then the warm-ups and measured blocks run in the order of
 * {@link callSchedule}. Only one contender calls at any time. Resolves to each contender's answer, totals over its
 * blocks; a contender whose process fails drops out of the schedule with its failure as its answer.
 */
async function interleavedCalls(
  order: readonly ContenderId[],
  job: WorkerArgs,
  blocks: number,
): Promise<Map<ContenderId, WorkerResult>> {
  const servers: HttpServer[] = [];
  const workers = new Map<ContenderId, SteeredWorker>();
  const answers = new Map<ContenderId, WorkerResult>();
  try {
    for (const contender of order) {
      let args = job;
      if (job.server === 'http') {
        const http = await startHttpServer();
        servers.push(http);
        args = { ...job, url: http.url };
      }
      const worker = startSteeredWorker(contender, args, WORKER_TIMEOUT_MS * order.length);
      workers.set(contender, worker);
      // One process starts and connects at a time, so that none of them starts beside another's.
      if (!(await worker.ready)) answers.set(contender, await worker.result);
    }
    for (const step of callSchedule(order, job.calls, blocks, job.concurrency, job.warmup)) {
      if (answers.has(step.contender)) continue;
      const worker = workers.get(step.contender)!;
      const command: Exclude<SteerCommand, { op: 'finish' }> = {
        op: step.warmup ? 'warmup' : 'block',
        concurrency: step.concurrency,
        calls: step.calls,
      };
      if (!(await worker.order(command))) answers.set(step.contender, await worker.result);
    }
    for (const contender of order) {
      if (!answers.has(contender)) answers.set(contender, await workers.get(contender)!.finish());
    }
  } finally {
    for (const worker of workers.values()) worker.kill();
    await Promise.all(servers.map((http) => http.close()));
  }
  return new Map(order.map((contender) => [contender, answers.get(contender)!]));
}

function record(
  recorder: Recorder,
  contender: ContenderId,
  r: number,
  job: WorkerArgs,
  result: WorkerResult,
  has: (f: Figure) => boolean,
): void {
  const ids = figureIds(job, has);
  if (!result.ok) {
    recorder.fail(ids, contender, r, result.error);
    return;
  }
  switch (result.job) {
    case 'calls': {
      const prefix = `latency.${job.server}`;
      if (has('latency')) {
        if (result.warmup !== undefined) {
          recorder.record(`cpu.${job.server}.warmup`, contender, r, result.warmup.cpuUsPerCall);
        }
        recorder.record(`${prefix}.p50`, contender, r, result.latency.p50Us);
        recorder.record(`${prefix}.p99`, contender, r, result.latency.p99Us);
        recorder.record(`cpu.${job.server}.seq`, contender, r, result.latency.cpuUsPerCall);
      }
      for (const t of result.throughput) {
        recorder.record(`throughput.${job.server}.c${t.concurrency}`, contender, r, t.callsPerSec);
        recorder.record(`cpu.${job.server}.c${t.concurrency}`, contender, r, t.cpuUsPerCall);
      }
      return;
    }
    case 'connect': {
      const one = median(result.oneMs);
      const many = median(result.manyMs);
      recorder.record('connect.one', contender, r, round(one, 1));
      recorder.record('connect.many', contender, r, round(many, 1));
      recorder.record('connect.scale', contender, r, round(many / one, 3));
      return;
    }
    case 'memory':
      recorder.record('memory.rss', contender, r, result.rssPerServerKiB);
      recorder.record('memory.heap', contender, r, result.heapPerServerKiB);
      return;
    case 'reconnect':
      recorder.record('reconnect', contender, r, round(median(result.samplesMs), 1));
      recorder.pool('reconnect', contender, result.samplesMs);
      return;
    case 'warmup': // bench/warmup.ts runs this job, not the harness
      return;
  }
}

function figureIds(job: WorkerArgs, has: (f: Figure) => boolean): string[] {
  switch (job.job) {
    case 'calls':
      return [
        ...(has('latency')
          ? [
              ...(job.warmup > 0 ? [`cpu.${job.server}.warmup`] : []),
              `latency.${job.server}.p50`,
              `latency.${job.server}.p99`,
              `cpu.${job.server}.seq`,
            ]
          : []),
        ...job.concurrency.flatMap((c) => [`throughput.${job.server}.c${c}`, `cpu.${job.server}.c${c}`]),
      ];
    case 'connect':
      return ['connect.one', 'connect.many', 'connect.scale'];
    case 'memory':
      return ['memory.rss', 'memory.heap'];
    case 'reconnect':
      return ['reconnect'];
    case 'warmup':
      return [];
  }
}

function brief(result: WorkerResult): string {
  if (!result.ok) return `${result.unsupported ? 'not supported' : 'FAILED'}: ${result.error.split('\n')[0]}`;
  switch (result.job) {
    case 'calls':
      return `${result.warmup === undefined ? '' : `warm-up cpu ${result.warmup.cpuUsPerCall} µs; `}p50 ${result.latency.p50Us} µs, p99 ${result.latency.p99Us} µs, cpu ${result.latency.cpuUsPerCall} µs; ${result.throughput
        .map((t) => `c${t.concurrency} ${Math.round(t.callsPerSec)}/s cpu ${t.cpuUsPerCall} µs`)
        .join(', ')}${Object.keys(result.notes).length > 0 ? ` ${JSON.stringify(result.notes)}` : ''}`;
    case 'connect':
      return `1: ${median(result.oneMs).toFixed(0)} ms, ${result.servers}: ${median(result.manyMs).toFixed(0)} ms`;
    case 'memory':
      return `${result.rssPerServerKiB} KiB RSS, ${result.heapPerServerKiB} KiB heap per server`;
    case 'reconnect':
      return `median ${median(result.samplesMs).toFixed(1)} ms of ${result.samplesMs.length}`;
    case 'warmup':
      return `${result.cpuUsPerCall.join(', ')} µs per call by block of ${result.blockCalls}`;
  }
}

await main();
