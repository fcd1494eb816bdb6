/**
 * What the console's panels read (issue 41): a principal's tools decided by its capability set (as `interlock
 * check` explains a decision, without consuming quota), the bindings in words, and quota use per set.
 */
import type { AuthMethod, PrincipalBinding } from '../../config/gateway.js';
import type { MCPClientManager } from '../../interop/manager.js';
import { resourceFor } from '../../security/pattern.js';
import type { PrincipalPolicies } from '../bindings.js';
import type { Principal } from '../principals.js';
import type { BindingView, QuotaView, ToolDecisionView } from './panels.js';

/** The `via` of a principal that authenticated with `method`. */
const VIA: Record<AuthMethod, Principal['via']> = {
  jwt: 'jwt',
  apiKey: 'api-key',
  mtls: 'mtls',
  stdio: 'stdio',
};

/** The principal the tools panel asks about, from its form. */
export function principalFromQuery(method: AuthMethod, subject: string, groups: string): Principal {
  return {
    subject,
    groups: groups
      .split(',')
      .map((g) => g.trim())
      .filter((g) => g !== ''),
    scopes: [],
    via: VIA[method],
  };
}

/** Every tool of the manager, decided for `principal` (deciding rule, effect, reason; blocked tools marked). */
export function toolDecisions(
  manager: MCPClientManager,
  policies: PrincipalPolicies,
  principal: Principal,
): ToolDecisionView[] {
  const capabilities = policies.capabilitiesFor(principal);
  const blocked = new Set(manager.blockedTools.map((b) => b.name));
  return manager.tools.map((tool) => {
    const decision = capabilities.check(resourceFor.tool(tool.server, tool.tool), 'execute', {
      agent: 'gateway',
      principal: principal.subject,
      groups: principal.groups,
      scopes: principal.scopes,
      annotations: tool.annotations,
    });
    return {
      name: tool.name,
      effect: decision.effect,
      ruleId: decision.ruleId,
      reason: decision.reason,
      blocked: blocked.has(tool.name),
    };
  });
}

/** The bindings of `gateway.principals` in words: whom each matches and its rules' ids or resources. */
export function bindingViews(bindings: readonly PrincipalBinding[] | undefined): BindingView[] | undefined {
  return bindings?.map((binding, index) => ({
    index,
    match: JSON.stringify(binding.match),
    rules: binding.rules.map((r) => `${r.effect} ${r.id ?? r.resource}`),
  }));
}

/**
 * Every `maxCalls` rule in the sets built so far, with its use as this process counts it (none when the fleet's
 * store counts it: `used` is then undefined).
 */
export function quotaViews(policies: PrincipalPolicies): QuotaView[] {
  return policies.sets().flatMap(([scope, set]) =>
    set.rules.flatMap((rule) => {
      if (rule.maxCalls === undefined) return [];
      const used = set.usage(rule.id)?.used;
      return [{ scope, ruleId: rule.id, used, maxCalls: rule.maxCalls, per: rule.per }];
    }),
  );
}
