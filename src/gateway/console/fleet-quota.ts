/**
 * The fleet's quota use for the console's quota panel (issue 41): with the fleet's store, a `maxCalls` rule counts
 * in Redis under one key per rule and principal (the key the capability set charges: rule id, agent `gateway`,
 * subject), shared by every gateway process. The panel reads those counters without taking a unit, for the
 * principals the console knows of: those in its decision feed (the fleet's audit stream when it follows one) and
 * the one the operator asks about.
 */
import type { PrincipalBinding } from '../../config/gateway.js';
import { tupleKey } from '../../json.js';
import { parseWindow } from '../../security/rules.js';
import type { StateStore } from '../../state/types.js';
import type { PrincipalPolicies } from '../bindings.js';
import type { AuditFeed } from './feed.js';
import type { QuotaView } from './panels.js';

/** Most principals the panel reads counters for (each costs a round trip per quota rule). */
const MAX_PRINCIPALS = 50;

interface QuotaRule {
  readonly scope: string;
  readonly ruleId: string;
  readonly maxCalls: number;
  readonly per: string | undefined;
}

/** The `maxCalls` rules a gateway caller can be charged under: the bindings' (with bindings), else the policy's. */
function quotaRules(
  bindings: readonly PrincipalBinding[] | undefined,
  policies: PrincipalPolicies,
): QuotaRule[] {
  const seen = new Set<string>();
  const rules: QuotaRule[] = [];
  const add = (
    scope: string,
    rule: { id?: string | undefined; maxCalls?: number | undefined; per?: string | undefined },
  ) => {
    if (rule.maxCalls === undefined || rule.id === undefined || seen.has(rule.id)) return;
    seen.add(rule.id);
    rules.push({ scope, ruleId: rule.id, maxCalls: rule.maxCalls, per: rule.per });
  };
  if (bindings === undefined) {
    for (const [scope, set] of policies.sets()) for (const rule of set.rules) add(scope, rule);
  } else {
    bindings.forEach((binding, index) => {
      for (const rule of binding.rules) add(`binding ${index}`, rule);
    });
  }
  return rules;
}

/** The principals the feed has seen calls of (newest first), and `asked` first when given. */
function knownSubjects(feed: AuditFeed, asked: string | undefined): string[] {
  const subjects = new Set<string>(asked === undefined ? [] : [asked]);
  for (const entry of feed.recent()) {
    const { principal, agent } = entry.record;
    if (principal !== undefined && agent !== 'console') subjects.add(principal);
    if (subjects.size >= MAX_PRINCIPALS) break;
  }
  return [...subjects];
}

/**
 * The fleet's use of every quota rule for each known principal: the units the store has given out in the current
 * window (leased units not yet spent included). Rows with no use are left out, except for the principal asked about.
 */
export async function fleetQuotaViews(
  store: StateStore,
  deps: { bindings: readonly PrincipalBinding[] | undefined; policies: PrincipalPolicies; feed: AuditFeed },
  asked: string | undefined,
): Promise<QuotaView[]> {
  const rules = quotaRules(deps.bindings, deps.policies);
  const rows = knownSubjects(deps.feed, asked).flatMap((subject) =>
    rules.map(async (rule): Promise<QuotaView | undefined> => {
      const used = await store.used(tupleKey(rule.ruleId, 'gateway', subject), parseWindow(rule.per));
      if (used === 0 && subject !== asked) return undefined;
      return {
        scope: `${subject}, ${rule.scope}`,
        ruleId: rule.ruleId,
        used,
        maxCalls: rule.maxCalls,
        per: rule.per,
      };
    }),
  );
  return (await Promise.all(rows)).filter((row) => row !== undefined);
}
