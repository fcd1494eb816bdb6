/**
 * The 1 000-rule capability set Interlock's contender runs with (issue 8: "the full production path"). Same
 * shape as the sets of `bench/capability-check.ts`: 20 rules of mixed kinds per server (plain and glob
 * grants, denies, an ask, a conditional grant) over 50 servers (the last one has 10, to make 1 000), plus 10
 * denies with a wildcard server. One of the 50 servers is the bench's own, so every call is decided among its 20 rules and the 10 wildcard ones,
 * and the grant that allows `echo` is one of them.
 */
import type { CapabilitySet } from '../../src/security/index.js';

/** Rules in the set. */
export const POLICY_RULES = 1000;

/**
 * Builds the set with `SetClass` (the class of the Interlock build the contender runs: a set from another copy of
 * the code would not be accepted); `server` is the name the bench's echo server is connected under.
 */
export function benchCapabilities(SetClass: new () => CapabilitySet, server: string): CapabilitySet {
  const set = new SetClass();
  const names = [server, ...Array.from({ length: 49 }, (_, i) => `srv${i}`)];
  for (const [i, name] of names.entries()) {
    for (let j = 0; j < (i === names.length - 1 ? 10 : 20); j++) {
      const kind = j % 20;
      if (kind < 13) set.grant(`mcp:${name}:tool${j}`, 'execute');
      else if (kind < 16) set.grant(`mcp:${name}:read_${j}_*`, 'execute');
      else if (kind < 18) set.deny(`mcp:${name}:delete_${j}*`, 'execute');
      else if (kind === 18) set.ask(`mcp:${name}:push${j}`, 'execute');
      else
        set.grant(`mcp:${name}:write${j}`, 'execute', { when: { args: { path: { startsWith: '/data' } } } });
    }
  }
  for (let k = 0; k < 10; k++) set.deny(`mcp:*:admin_${k}_*`, 'execute');
  // Replace one plain grant of the bench server by the grant of its echo tool: still 1 000 rules.
  set.revoke(`mcp:${server}:tool0`);
  set.grant(`mcp:${server}:echo`, 'execute', { description: 'the bench echo tool' });
  if (set.rules.length !== POLICY_RULES)
    throw new Error(`expected ${POLICY_RULES} rules, built ${set.rules.length}`);
  return set;
}
