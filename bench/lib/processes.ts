/**
 * The processes the harness starts: contender processes (one job each, answering over IPC), the Streamable
 * HTTP echo server, import-time probes, the Interlock build for the import figure, and the capability check.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_DIR, BUILD_DIR, ECHO_SDK, MODULES_BUILD_DIR, ROOT_DIR } from './paths.js';
import type { ContenderId } from './peers.js';
import type { Job, SteerAnswer, SteerCommand, WorkerArgs, WorkerResult } from './protocol.js';

/**
 * Longest a contender process may run before it is killed and its job counted as failed (a steered one: this times
 * the number of contenders whose blocks it waits through).
 */
export const WORKER_TIMEOUT_MS = 300_000;
const STDERR_KEEP = 4_000;

/** The flags of a contender process for `args`. */
export function workerFlags(args: WorkerArgs): string[] {
  const flags = [
    '--job',
    args.job,
    '--server',
    args.server,
    '--calls',
    String(args.calls),
    '--warmup',
    String(args.warmup),
    `--concurrency=${args.concurrency.join(',')}`,
    '--servers',
    String(args.servers),
    '--delay-ms',
    String(args.delayMs),
    '--reps',
    String(args.reps),
    '--kills',
    String(args.kills),
  ];
  if (args.url !== undefined) flags.push('--url', args.url);
  if (args.steered) flags.push('--steered');
  return flags;
}

function spawnWorker(contender: ContenderId, args: WorkerArgs): ChildProcess {
  const file = join(BENCH_DIR, 'contenders', `${contender}.ts`);
  return spawn(process.execPath, ['--import', 'tsx', '--expose-gc', file, ...workerFlags(args)], {
    cwd: ROOT_DIR,
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
}

/** Runs one job of one contender in a fresh process and resolves to its answer (failures included). */
export function runWorker(contender: ContenderId, args: WorkerArgs): Promise<WorkerResult> {
  return collect(spawnWorker(contender, args), args.job, WORKER_TIMEOUT_MS);
}

/** A contender process running a steered `calls` job (`args.steered`), taking the harness's orders. */
export interface SteeredWorker {
  /** Resolves once the process has connected and takes orders (`true`), or has exited first (`false`). */
  readonly ready: Promise<boolean>;
  /**
   * Sends an order and resolves once the process has carried it out: `true`, or `false` when the process is gone
   * (its answer, a failure, is then in {@link result}). Orders are sent one at a time.
   */
  order(command: Exclude<SteerCommand, { op: 'finish' }>): Promise<boolean>;
  /** Orders the process to finish and resolves to its answer. */
  finish(): Promise<WorkerResult>;
  /** The process's answer, once it has exited (failures included). */
  readonly result: Promise<WorkerResult>;
  /** Kills the process if it still runs (cleanup after a failure elsewhere; its answer is then a failure). */
  kill(): void;
}

/**
 * Starts a contender process for a steered `calls` job. It connects and checks one call by itself, then says it is
 * ready; the worker's orders wait for that.
 */
export function startSteeredWorker(
  contender: ContenderId,
  args: WorkerArgs,
  timeoutMs = WORKER_TIMEOUT_MS,
): SteeredWorker {
  const child = spawnWorker(contender, { ...args, job: 'calls', steered: true });
  let pending: ((ok: boolean) => void) | undefined;
  let markReady: (ok: boolean) => void = () => {};
  const ready = new Promise<boolean>((resolve) => {
    markReady = resolve;
  });
  const result = collect(child, 'calls', timeoutMs, (message) => {
    const op = (message as Partial<SteerAnswer>).op;
    if (op === 'ready') markReady(true);
    else if (op === 'done') {
      const resolve = pending;
      pending = undefined;
      resolve?.(true);
    } else return false;
    return true;
  });
  let gone = false;
  void result.then(() => {
    gone = true;
    markReady(false);
    const resolve = pending;
    pending = undefined;
    resolve?.(false);
  });
  return {
    async order(command) {
      if (!(await ready) || gone || !child.connected) return false;
      return new Promise<boolean>((resolve) => {
        pending = resolve;
        child.send(command, (err) => {
          if (err !== null && pending === resolve) {
            pending = undefined;
            resolve(false);
          }
        });
      });
    },
    finish() {
      if (child.connected) child.send({ op: 'finish' } satisfies SteerCommand, () => {});
      return result;
    },
    ready,
    result,
    kill() {
      if (!gone) child.kill('SIGKILL');
    },
  };
}

/**
 * The answer of a contender process once it exits. `intercept`, when given, sees every IPC message first and keeps
 * the ones it returns `true` for; the last message left is the answer.
 */
function collect(
  child: ChildProcess,
  job: Job,
  timeoutMs: number,
  intercept?: (message: unknown) => boolean,
): Promise<WorkerResult> {
  return new Promise((resolve) => {
    let answer: WorkerResult | undefined;
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_KEEP);
    });
    child.on('message', (message) => {
      if (intercept?.(message) === true) return;
      answer = message as WorkerResult;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ ok: false, job, error: `could not start: ${err.message}` });
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (answer !== undefined) resolve(answer);
      else {
        const how = signal === null ? `code ${code}` : signal;
        resolve({ ok: false, job, error: `exited with ${how} without an answer. stderr:\n${stderr.trim()}` });
      }
    });
  });
}

/** A Streamable HTTP echo server (`echo-sdk.mjs --transport http`) on 127.0.0.1. */
export interface HttpServer {
  url: string;
  close(): Promise<void>;
}

/** Starts the Streamable HTTP echo server and resolves once it listens. */
export function startHttpServer(timeoutMs = 15_000): Promise<HttpServer> {
  const child = spawn(process.execPath, [ECHO_SDK, '--transport', 'http', '--port', '0'], {
    cwd: ROOT_DIR,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_KEEP);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin.end();
      child.kill('SIGTERM');
      const force = setTimeout(() => child.kill('SIGKILL'), 3_000);
      await exited;
      clearTimeout(force);
    }
  };
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      void close();
      reject(new Error(`the HTTP echo server did not listen within ${timeoutMs} ms: ${stderr}`));
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /^LISTENING (\d+)$/m.exec(out);
      if (match !== null) {
        clearTimeout(timer);
        resolve({ url: `http://127.0.0.1:${match[1]}/mcp`, close });
      }
    });
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`the HTTP echo server exited: ${stderr}`));
    });
  });
}

/** Newest modification time under `dir` (files ending in `ext`). */
export function newest(dir: string, ext: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) latest = Math.max(latest, newest(path, ext));
    else if (entry.name.endsWith(ext)) latest = Math.max(latest, statSync(path).mtimeMs);
  }
  return latest;
}

/** Set to a directory holding a build of Interlock (its `index.js`) to bench that build: a candidate fix. */
export const BUILD_OVERRIDE_ENV = 'BENCH_INTERLOCK_BUILD';

/**
 * Builds `src/` into `bench/node_modules/.interlock-build/` the way `npm run build` builds `dist/`
 * (scripts/build.mjs: tsc, then the modules linked into one file per entry point and shared chunks) unless that
 * build is newer than every source file. Returns the entry point, or throws with the build's output. With
 * BENCH_INTERLOCK_BUILD set, returns that build's entry point instead and builds nothing.
 *
 * `{ modules: true }` builds `bench/node_modules/.interlock-build-modules/` instead, tsc's modules one file each
 * (`scripts/build.mjs --modules`): the same code, for the benchmarks that import an internal module by its path
 * (no entry point of the linked build exports `InterlockClient`). The override applies to it too.
 */
export function ensureInterlockBuild(options: { modules?: boolean } = {}): string {
  const override = process.env[BUILD_OVERRIDE_ENV];
  if (override !== undefined && override !== '') {
    const given = join(resolve(override), 'index.js');
    if (!existsSync(given)) throw new Error(`${BUILD_OVERRIDE_ENV}: no index.js in ${override}`);
    return given;
  }
  const dir = options.modules === true ? MODULES_BUILD_DIR : BUILD_DIR;
  const entry = join(dir, 'index.js');
  const script = join(ROOT_DIR, 'scripts', 'build.mjs');
  const sources = Math.max(newest(join(ROOT_DIR, 'src'), '.ts'), statSync(script).mtimeMs);
  if (existsSync(entry) && statSync(entry).mtimeMs >= sources) return entry;
  const flags = options.modules === true ? ['--out', dir, '--modules'] : ['--out', dir];
  // No time limit of its own: on a loaded machine the build takes minutes (seven were seen with a 3-minute limit,
  // which killed it with nothing printed); whoever runs the bench bounds the whole run (issue 39).
  const run = spawnSync(process.execPath, [script, ...flags], { cwd: ROOT_DIR, encoding: 'utf8' });
  if (run.status !== 0 || !existsSync(entry)) {
    const how =
      run.error?.message ?? (run.signal === null ? `exit code ${run.status}` : `killed by ${run.signal}`);
    throw new Error(`building Interlock failed (${how}):\n${run.stdout}${run.stderr}`);
  }
  return entry;
}

/**
 * Imports `path`, a module of an Interlock build (relative to the directory of `entry`, what `ensureInterlockBuild`
 * returned), and throws if a loader rewrote it on the way. tsx re-transforms JavaScript outside `node_modules` with
 * `keepNames`, so a build it loads names its functions at run time with `__name(…)` calls the package does not
 * make (see `BUILD_DIR`): a build given through BENCH_INTERLOCK_BUILD must lie under a `node_modules` directory.
 */
export async function importBuild<T>(entry: string, path = 'index.js'): Promise<T> {
  const loaded = (await import(pathToFileURL(join(dirname(entry), path)).href)) as Record<string, unknown>;
  const rewritten = Object.entries(loaded).find(
    ([, value]) => typeof value === 'function' && Function.prototype.toString.call(value).includes('__name('),
  );
  if (rewritten !== undefined) {
    throw new Error(
      `${path} of the Interlock build in ${dirname(entry)} was rewritten while loading: ${rewritten[0]} calls ` +
        `__name(), which tsx's keepNames adds to JavaScript outside node_modules. Put the build under a ` +
        `node_modules directory (${BUILD_OVERRIDE_ENV}=/path/node_modules/<name>).`,
    );
  }
  return loaded as T;
}

/**
 * Milliseconds a fresh Node process takes to import `specifiers` (resolved from `bench/`, so the peers come
 * from bench/node_modules), process start-up excluded.
 */
export function importTimeMs(specifiers: readonly string[]): Promise<number> {
  const code = [
    `const specs = ${JSON.stringify(specifiers)};`,
    'const t0 = performance.now();',
    'for (const s of specs) await import(s);',
    'process.stdout.write(JSON.stringify({ ms: performance.now() - t0 }));',
    'process.exit(0);',
  ].join('\n');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      cwd: BENCH_DIR,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      err = (err + c).slice(-STDERR_KEEP);
    });
    child.once('error', reject);
    child.once('exit', () => {
      const match = /\{"ms":[^}]+\}/.exec(out);
      if (match === null) reject(new Error(`import of ${specifiers.join(', ')} failed: ${err.trim()}`));
      else resolve((JSON.parse(match[0]) as { ms: number }).ms);
    });
  });
}

/** The file URL of the Interlock build, as an import specifier. */
export function buildSpecifier(entry: string): string {
  return pathToFileURL(entry).href;
}

/** The 1 000-rule figure of `bench/capability-check.ts` (the check-latency benchmark, run as it is). */
export interface CapabilityFigure {
  p50Us: number;
  p99Us: number;
  rules: number;
  scenario: string;
}

/** Runs `bench/capability-check.ts` and reads the first scenario (1 000 rules) of the file it writes. */
export function runCapabilityCheck(): Promise<CapabilityFigure> {
  const script = join(BENCH_DIR, 'capability-check.ts');
  const out = join(BENCH_DIR, 'results', 'capability-check.json');
  if (!existsSync(script)) return Promise.reject(new Error('bench/capability-check.ts is not there'));
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: ROOT_DIR,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      err = (err + c).slice(-STDERR_KEEP);
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      try {
        if (code !== 0) throw new Error(`capability-check exited with ${code}: ${err.trim()}`);
        if (statSync(out).mtimeMs < started - 1_000) throw new Error(`${out} was not rewritten`);
        const json = JSON.parse(readFileSync(out, 'utf8')) as {
          results: { name: string; rules: number; p50Us: number; p99Us: number }[];
        };
        const first = json.results[0];
        if (first === undefined) throw new Error(`${out} holds no results`);
        resolve({ p50Us: first.p50Us, p99Us: first.p99Us, rules: first.rules, scenario: first.name });
      } catch (e) {
        reject(e);
      }
    });
  });
}
