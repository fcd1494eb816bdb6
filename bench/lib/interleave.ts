/**
 * The order in which the harness runs the contenders' measured call blocks. On a shared machine, load from
 * elsewhere comes in spells that can outlast one contender's whole job: run contender after contender and a spell
 * lands on whichever ran then, and the ratios of that round say more about the spell than about the clients. Cut
 * each contender's calls into blocks and let the contenders take turns block by block, and a spell falls on all of
 * them alike.
 */

/**
 * One step of a `calls` job: a turn of a contender's warm-up calls before a figure, or one measured block; `calls`
 * calls either way, sequential or with `concurrency` in flight.
 */
export interface Step<C extends string> {
  contender: C;
  concurrency: number | 'sequential';
  calls: number;
  warmup: boolean;
}

/** `items` rotated left by `n`. */
export function rotate<T>(items: readonly T[], n: number): T[] {
  const k = items.length === 0 ? 0 : n % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** `total` split into `parts` whole parts that differ by one at most (fewer parts when `total` is smaller). */
export function splitCalls(total: number, parts: number): number[] {
  const n = Math.max(1, Math.min(parts, total));
  return Array.from({ length: n }, (_, i) => Math.floor(total / n) + (i < total % n ? 1 : 0));
}

/**
 * Every step of one `calls` job, in the order to run them: the sequential figure first, then each concurrency level.
 * For each, the contenders warm up at it in `blocks` turns, then measure it in `blocks` more, the order of the
 * contenders rotating from turn to turn so that none always follows the same one. Each contender's warm-up turns of
 * a figure add up to `warmup` calls, its measured blocks to `calls`.
 *
 * The warm-up takes turns too: warmed up whole, one contender after the other, a contender would wait out all the
 * others' warm-ups (half a minute over HTTP) between its own and its first measured block. A Node process that goes
 * quiet that long has its heap shrunk by V8's memory reducer, and then pays to grow it back in the blocks that
 * follow: the measure of steady state would start out of it (issue 15, sixteenth pass).
 */
export function callSchedule<C extends string>(
  order: readonly C[],
  calls: number,
  blocks: number,
  concurrency: readonly number[],
  warmup = 0,
): Step<C>[] {
  const schedule: Step<C>[] = [];
  const turns = (level: number | 'sequential', sizes: number[], isWarmup: boolean) => {
    for (const [turn, size] of sizes.entries()) {
      for (const contender of rotate(order, turn)) {
        schedule.push({ contender, concurrency: level, calls: size, warmup: isWarmup });
      }
    }
  };
  for (const level of ['sequential' as const, ...concurrency]) {
    if (warmup > 0) turns(level, splitCalls(warmup, blocks), true);
    turns(level, splitCalls(calls, blocks), false);
  }
  return schedule;
}
