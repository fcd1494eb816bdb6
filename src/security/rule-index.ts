/**
 * Where a capability set keeps its rules: indexed by scheme and literal second segment (the server, or
 * a native tool name), with patterns that have no wildcard looked up by the whole resource. A check
 * therefore costs the rules of one server plus the few with a wildcard server, not all rules. A small
 * cache remembers which rules' patterns match a resource; it is pure, and cleared by every change.
 */
import { matchPattern, resourceProblem } from './pattern.js';
import type { CompiledRule, RuleInfo } from './rules.js';

/** Default size of the match cache (resources remembered). */
export const DEFAULT_MATCH_CACHE_SIZE = 4096;
/** Longer resources are matched every time rather than remembered. */
const MAX_CACHED_RESOURCE_LENGTH = 512;

/** What is known about one resource string under the current rules. */
export interface Match {
  /** Why the resource is malformed, if it is. */
  readonly problem: string | undefined;
  /** Rules whose pattern matches it. Actions, expiry, conditions and quotas are checked at each call. */
  readonly rules: readonly CompiledRule[];
}

/** Rules of one scheme and literal second segment: exact patterns by resource, and globs. */
interface KeyBucket {
  readonly exact: Map<string, readonly CompiledRule[]>;
  globs: readonly CompiledRule[];
}

/** Rules of one scheme: by literal second segment, and those with a wildcard there. */
interface Bucket {
  readonly byKey: Map<string, KeyBucket>;
  wildcard: readonly CompiledRule[];
}

/** The empty rule list. */
export const NONE: readonly CompiledRule[] = Object.freeze([]);

/** The second segment of a well-formed resource (server, or native tool name); `first` is its first ':'. */
function literalKey(resource: string, first: number): string {
  const second = resource.indexOf(':', first + 1);
  return second < 0 ? resource.slice(first + 1) : resource.slice(first + 1, second);
}

/** The rules of one set, indexed. Rule lists are copied on write, so a running check never sees a half-update. */
export class RuleIndex {
  readonly #buckets = new Map<string, Bucket>();
  readonly #byId = new Map<string, CompiledRule>();
  readonly #matches = new Map<string, Match>();
  readonly #cacheSize: number;
  #snapshot: readonly RuleInfo[] | undefined;
  #timed = false;

  constructor(cacheSize: number) {
    this.#cacheSize = cacheSize;
  }

  /** True once a rule with an expiry or a condition was added: checks then need the time. */
  get timed(): boolean {
    return this.#timed;
  }

  get(id: string): CompiledRule | undefined {
    return this.#byId.get(id);
  }

  /** Every rule, in the order added. */
  values(): IterableIterator<CompiledRule> {
    return this.#byId.values();
  }

  /** The public view of every rule, in the order added: a frozen snapshot. */
  infos(): readonly RuleInfo[] {
    this.#snapshot ??= Object.freeze([...this.#byId.values()].map((r) => r.info));
    return this.#snapshot;
  }

  insert(rule: CompiledRule): void {
    const { scheme, key, exact } = rule.pattern;
    let bucket = this.#buckets.get(scheme);
    if (bucket === undefined) {
      bucket = { byKey: new Map(), wildcard: NONE };
      this.#buckets.set(scheme, bucket);
    }
    if (key === undefined) {
      bucket.wildcard = Object.freeze([...bucket.wildcard, rule]);
    } else {
      let byKey = bucket.byKey.get(key);
      if (byKey === undefined) {
        byKey = { exact: new Map(), globs: NONE };
        bucket.byKey.set(key, byKey);
      }
      if (exact === undefined) byKey.globs = Object.freeze([...byKey.globs, rule]);
      else byKey.exact.set(exact, Object.freeze([...(byKey.exact.get(exact) ?? NONE), rule]));
    }
    this.#byId.set(rule.id, rule);
    this.#changed();
    if (rule.expiresAt !== undefined || rule.condition !== undefined || rule.windowMs !== undefined)
      this.#timed = true;
  }

  remove(rule: CompiledRule): void {
    const { scheme, key, exact } = rule.pattern;
    const bucket = this.#buckets.get(scheme);
    const without = (list: readonly CompiledRule[]) => Object.freeze(list.filter((r) => r !== rule));
    const byKey = key === undefined ? undefined : bucket?.byKey.get(key);
    if (bucket !== undefined && key === undefined) bucket.wildcard = without(bucket.wildcard);
    else if (byKey !== undefined && exact === undefined) byKey.globs = without(byKey.globs);
    else if (byKey !== undefined && exact !== undefined) {
      byKey.exact.set(exact, without(byKey.exact.get(exact) ?? NONE));
    }
    this.#byId.delete(rule.id);
    this.#changed();
  }

  #changed(): void {
    this.#snapshot = undefined;
    this.#matches.clear();
  }

  /** Whether `resource` is well formed, and the rules whose pattern matches it. */
  match(resource: string): Match {
    const hit = this.#matches.get(resource);
    if (hit !== undefined) return hit;
    const problem = resourceProblem(resource);
    const match: Match = { problem, rules: problem === undefined ? this.#matching(resource) : NONE };
    if (
      typeof resource === 'string' &&
      resource.length <= MAX_CACHED_RESOURCE_LENGTH &&
      this.#cacheSize > 0
    ) {
      // Full: forget the oldest entry (a Map iterates in insertion order).
      if (this.#matches.size >= this.#cacheSize) this.#matches.delete(this.#matches.keys().next().value!);
      this.#matches.set(resource, match);
    }
    return match;
  }

  #matching(resource: string): readonly CompiledRule[] {
    const first = resource.indexOf(':');
    const bucket = this.#buckets.get(resource.slice(0, first));
    if (bucket === undefined) return NONE;
    const out: CompiledRule[] = [];
    const byKey = bucket.byKey.get(literalKey(resource, first));
    if (byKey !== undefined) {
      out.push(...(byKey.exact.get(resource) ?? NONE));
      for (const rule of byKey.globs) if (matchPattern(rule.pattern, resource)) out.push(rule);
    }
    for (const rule of bucket.wildcard) if (matchPattern(rule.pattern, resource)) out.push(rule);
    return out.length === 0 ? NONE : Object.freeze(out);
  }
}
