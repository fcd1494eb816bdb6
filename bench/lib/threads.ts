/**
 * Where a contender process's CPU goes, by thread (Linux only; a diagnostic of issue 15's sixth pass). Node runs
 * JavaScript on its main thread; V8's platform workers (also named `node`) compile optimized code and help the
 * garbage collector. `process.cpuUsage()` adds them all up, so a contender whose code is still being optimized
 * pays for the compiler in its "CPU per call". With BENCH_THREADS=1 the calls job prints, for each block it
 * measures, the main thread's CPU per call and the other threads', from /proc/self/task/<tid>/schedstat, how many
 * times per call the main thread went to sleep (to wait for an answer, mostly: each costs a wake-up), and a
 * line `[block] <label>` where each block starts: under `node --trace-opt --trace-deopt` (which print to stdout), the
 * two streams merged show which compilations and deopts fell inside a measured block.
 */
import { readdirSync, readFileSync, writeSync } from 'node:fs';

/** Set to 1 to print each measured block's CPU per call by thread on stderr. */
export const THREADS_ENV = 'BENCH_THREADS';

/** Nanoseconds on CPU so far, per thread id, and the main thread's sleeps under {@link SLEEPS}; empty off Linux. */
export type ThreadTimes = Map<number, number>;

/** The key in {@link ThreadTimes} of the main thread's voluntary context switches (no thread has id -1). */
const SLEEPS = -1;

function mainThreadSleeps(): number {
  const status = readFileSync(`/proc/self/task/${process.pid}/status`, 'utf8');
  return Number(/^voluntary_ctxt_switches:\s*(\d+)/m.exec(status)?.[1] ?? Number.NaN);
}

/** The CPU time of every thread now; with a `label`, first marks the start of the block so named. */
export function threadTimes(label?: string): ThreadTimes {
  const times: ThreadTimes = new Map();
  if (process.env[THREADS_ENV] !== '1') return times;
  if (label !== undefined) writeSync(2, `[block] ${label}\n`);
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const schedstat = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8');
      times.set(Number(tid), Number(schedstat.split(' ')[0]));
    }
    times.set(SLEEPS, mainThreadSleeps());
  } catch {
    // not Linux, or a thread ended while being read: no split for this block
  }
  return times;
}

/** Prints `label`'s CPU per call since `before`: the main thread's, and every other thread's together. */
export function reportThreads(label: string, before: ThreadTimes, calls: number): void {
  if (before.size === 0) return;
  let main = 0;
  let others = 0;
  let sleeps = 0;
  for (const [tid, ns] of threadTimes()) {
    const spent = ns - (before.get(tid) ?? 0);
    if (tid === SLEEPS) sleeps = spent;
    else if (tid === process.pid) main += spent;
    else others += spent;
  }
  const perCall = (ns: number) => (ns / 1000 / calls).toFixed(1);
  // Straight to the file descriptor: a write through process.stderr would run Node's stream code on a second
  // kind of stream, and V8 would deoptimize the code the contender's pipe writes share with it, in the next block.
  writeSync(
    2,
    `[threads] ${label}: main thread ${perCall(main)} µs/call, other threads ${perCall(others)} µs/call, ` +
      `main thread slept ${(sleeps / calls).toFixed(2)} times/call\n`,
  );
}
