/**
 * Shared quotas (issue 38): the units an allowing decision still owes a counter shared by every process (a
 * `StateStore`), taken by the gate after deciding. The capability set notes them per decision object; the gate
 * charges them once the whole decision allows.
 */
import { display } from './pattern.js';
import type { CompiledRule } from './rules.js';
import type { Decision, QuotaCounter } from './types.js';

/** Quota units a decision still has to take from a shared counter. */
export interface SharedCharges {
  counter: QuotaCounter;
  charges: readonly { rule: CompiledRule; key: string; limit: number; windowMs: number | undefined }[];
}

/** What each pending decision owes (keyed by the decision object). For the capability set and the gate only. */
export const sharedCharges = new WeakMap<Decision, SharedCharges>();

/**
 * For the gate only: takes the shared quota units an allowing decision still owes. Returns the decision when
 * every counter granted its unit, or a default deny naming the quota (used up across processes, or not
 * checkable because the counter failed: fails closed).
 */
export function chargeSharedQuotas(
  decision: Decision,
  resource: string,
  action: string,
): Decision | Promise<Decision> {
  const owed = sharedCharges.get(decision);
  if (owed === undefined) return decision; // no promise, no extra turn, for every call without a shared quota
  sharedCharges.delete(decision);
  return charge(decision, owed, resource, action);
}

async function charge(
  decision: Decision,
  owed: SharedCharges,
  resource: string,
  action: string,
): Promise<Decision> {
  const what = `'${display(action)}' on '${display(resource)}'`;
  for (const charge of owed.charges) {
    const per = charge.rule.info.per === undefined ? '' : ` per ${charge.rule.info.per}`;
    let granted: boolean;
    try {
      granted = (await owed.counter.consume(charge.key, charge.limit, charge.windowMs)).allowed;
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return Object.freeze({
        allowed: false,
        effect: 'default-deny',
        reason: `Rule '${charge.rule.id}' allows ${what} within a shared quota of ${charge.limit} calls${per}, but the quota could not be checked (${why}), so the call is denied (default deny, fails closed).`,
      });
    }
    if (!granted) {
      return Object.freeze({
        allowed: false,
        effect: 'default-deny',
        reason: `Rule '${charge.rule.id}' allowed ${what} but its quota of ${charge.limit} calls${per}, shared by every process, is used up (default deny).`,
      });
    }
  }
  return decision;
}
