/** The three values a condition evaluates to (issue 3): it holds, does not hold, or failed (fails closed). */
export const HOLDS = 1;
export const FAILS_TO_HOLD = 0;
export const ERRORED = -1;
export type ConditionResult = typeof HOLDS | typeof FAILS_TO_HOLD | typeof ERRORED;
