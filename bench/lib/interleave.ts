/**
 * The order in which the harness runs the contenders' measured call blocks. On a shared machine, load from
 * elsewhere comes in spells that can outlast one contender's whole job: run contender after contender and a spell
 * lands on whichever ran then, and the ratios of that round say more about the spell than about the clients. Cut
 * each contender's calls into blocks and let the contenders take turns block by block, and a spell falls on all of
 * them alike.
 */

/**
 * One step of a `calls` job: a contender's warm-up calls before a figure (the harness's `--warmup` count), or one
 * measured block of `calls` calls; sequential, or with `concurrency` in flight.
 */
export interface Step<C extends string> {
  contender: C;
  concurrency: number | 'sequential';
  /** Measured calls; 0 for a warm-up step. */
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
 * For each, every contender warms up at it in turn, then come `blocks` turns in which every contender runs one
 * measured block, the order of the contenders rotating from turn to turn so that none always follows the same one.
 * Each contender's blocks of one figure add up to `calls`.
 */
export function callSchedule<C extends string>(
  order: readonly C[],
  calls: number,
  blocks: number,
  concurrency: readonly number[],
): Step<C>[] {
  const sizes = splitCalls(calls, blocks);
  const schedule: Step<C>[] = [];
  for (const level of ['sequential' as const, ...concurrency]) {
    for (const contender of order) schedule.push({ contender, concurrency: level, calls: 0, warmup: true });
    for (const [turn, size] of sizes.entries()) {
      for (const contender of rotate(order, turn)) {
        schedule.push({ contender, concurrency: level, calls: size, warmup: false });
      }
    }
  }
  return schedule;
}
