/**
 * Which rules a principal gets (issue 17). Each binding's rules are derived from the project's capability set,
 * so no binding can reach past the project policy; a principal gets the rules of every binding it matches
 * (deny still wins among them), and a principal that matches none gets an empty set: it sees no tool and every
 * call is denied. Without bindings every authenticated principal gets the project's set itself.
 */

import type { AuthMethod, PrincipalBinding } from '../config/gateway.js';
import { tupleKey } from '../json.js';
import type { CapabilitySet } from '../security/capability-set.js';
import type { PolicyRule } from '../security/policy.js';
import { type Principal, principalMatches } from './principals.js';

/** Picks the capability set for a principal; sets are built once per distinct combination of bindings. */
export class PrincipalPolicies {
  readonly #root: CapabilitySet;
  readonly #bindings: readonly PrincipalBinding[] | undefined;
  readonly #sets = new Map<string, CapabilitySet>();
  /** Whom each set of {@link #sets} was built for (the operator console's quota panel reads it). */
  readonly #owners = new Map<CapabilitySet, string>();
  readonly #shorthand: AuthMethod | undefined;

  /**
   * Derives every binding once up front, so a binding that asks for more than the project policy allows is
   * refused at start (`INVALID_POLICY`), not on the first call of some principal.
   */
  constructor(
    root: CapabilitySet,
    bindings: readonly PrincipalBinding[] | undefined,
    /** The method a match's names without one stand for (see `shorthandMethod`); none: they match nobody. */
    shorthand?: AuthMethod | undefined,
  ) {
    this.#root = root;
    this.#bindings = bindings;
    this.#shorthand = shorthand;
    for (const binding of bindings ?? []) root.derive(binding.rules as PolicyRule[]);
  }

  /** The indices of the bindings `principal` matches, in order. */
  matching(principal: Principal): number[] {
    const out: number[] = [];
    (this.#bindings ?? []).forEach((binding, index) => {
      if (principalMatches(binding.match, principal, this.#shorthand)) out.push(index);
    });
    return out;
  }

  /**
   * The set every call of `principal` is checked against. Bindings with a `maxCalls` rule get a set per principal:
   * their quota counts per principal in this process as it does in a fleet's store (issue 38); one set shared by
   * every principal matching the binding shared one count.
   */
  capabilitiesFor(principal: Principal): CapabilitySet {
    const bindings = this.#bindings;
    if (bindings === undefined) return this.#root;
    const indices = this.matching(principal);
    const quota = indices.some((i) => bindings[i]?.rules.some((r) => r.maxCalls !== undefined));
    const key = quota ? tupleKey(indices.join(','), principal.via, principal.subject) : indices.join(',');
    let set = this.#sets.get(key);
    if (set === undefined) {
      const rules = indices.flatMap((i) => (this.#bindings as PrincipalBinding[])[i]?.rules ?? []);
      set = this.#root.derive(rules as PolicyRule[]);
      this.#sets.set(key, set);
      const owner = `binding${indices.length === 1 ? '' : 's'} ${indices.join(', ') || 'none'}`;
      this.#owners.set(set, quota ? `${principal.subject} (${principal.via}), ${owner}` : owner);
    }
    return set;
  }

  /** Each capability set built so far and whom it is for (without bindings: the project's own set). */
  sets(): [string, CapabilitySet][] {
    if (this.#bindings === undefined) return [['every caller', this.#root]];
    return [...this.#owners].map(([set, owner]) => [owner, set]);
  }
}
