/**
 * What a policy could ever allow (issue 40, "Which tools could ever be allowed"): the tools, resources, prompts and
 * server requests no request could ever allow, and rules that can never match. Exact and conservative: a target is
 * reported only when `CapabilitySet.couldAllow` (the same function that decides what the gateway and the manager
 * list) says no request could allow it, and a rule only when it provably never applies. Whatever cannot be proven
 * is "could be allowed".
 */
import type { CapabilitySet } from './capability-set.js';
import { type CompiledPattern, compilePattern, matchPattern, patternCovers, resourceFor } from './pattern.js';
import type { RuleInfo } from './rules.js';
import type { CheckContext, DecisionEffect, ToolHints } from './types.js';

/** The requests a server makes of us that the policy decides (action `request` on `mcp:{server}:{kind}`). */
export const SERVER_REQUEST_KINDS = Object.freeze(['elicitation', 'sampling', 'roots'] as const);

/** What a target is. */
export type TargetKind = 'tool' | 'resource' | 'resource-template' | 'prompt' | 'server-request';

/** Something a caller could ask for: a tool, a resource, a prompt, or a request a server makes of us. */
export interface ReachTarget {
  readonly kind: TargetKind;
  readonly server: string;
  /** The tool's, prompt's or request kind's name, or the resource's URI (template). */
  readonly name: string;
  /** What the policy names it (`mcp:notes:read_note`). */
  readonly resource: string;
  readonly action: string;
  /** A tool's annotations, which conditions may read. */
  readonly annotations?: ToolHints | undefined;
}

/** What is known of one server. Undefined lists are unknown (not "empty"). */
export interface ServerCatalog {
  readonly tools?: readonly { readonly name: string; readonly annotations?: unknown }[] | undefined;
  readonly resources?: readonly { readonly uri: string }[] | undefined;
  readonly resourceTemplates?: readonly { readonly uriTemplate: string }[] | undefined;
  readonly prompts?: readonly { readonly name: string }[] | undefined;
}

/** The targets of one server: its known tools, resources, templates and prompts, and the server requests. */
export function serverTargets(server: string, catalog: ServerCatalog): ReachTarget[] {
  const target = (kind: TargetKind, name: string, resource: string, action: string): ReachTarget => ({
    kind,
    server,
    name,
    resource,
    action,
  });
  return [
    ...(catalog.tools ?? []).map((t) => ({
      ...target('tool', t.name, resourceFor.tool(server, t.name), 'execute'),
      annotations: hintsOf(t.annotations),
    })),
    ...(catalog.resources ?? []).map((r) =>
      target('resource', r.uri, resourceFor.resource(server, r.uri), 'read'),
    ),
    ...(catalog.resourceTemplates ?? []).map((t) =>
      target('resource-template', t.uriTemplate, resourceFor.resource(server, t.uriTemplate), 'read'),
    ),
    ...(catalog.prompts ?? []).map((p) =>
      target('prompt', p.name, resourceFor.prompt(server, p.name), 'get'),
    ),
    ...SERVER_REQUEST_KINDS.map((k) =>
      target('server-request', k, resourceFor.serverRequest(server, k), 'request'),
    ),
  ];
}

/** The boolean hints of a tool's (untrusted) annotations; anything else is dropped. */
function hintsOf(annotations: unknown): ToolHints | undefined {
  if (typeof annotations !== 'object' || annotations === null) return undefined;
  const a = annotations as Record<string, unknown>;
  const out: Record<string, boolean> = {};
  for (const key of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
    if (typeof a[key] === 'boolean') out[key] = a[key];
  }
  return out;
}

/** A target no request could allow, and what decides it. */
export interface NeverAllowed {
  readonly target: ReachTarget;
  /** `deny` when an unconditional deny rule applies, else `default-deny` (no allow or ask rule could apply). */
  readonly effect: DecisionEffect;
  readonly rule: string | undefined;
  /**
   * Ms since the epoch when the deciding deny rule expires: "never" holds until then. Undefined: for good (as long
   * as the policy stays as it is).
   */
  readonly until: number | undefined;
}

/**
 * The targets `set` could never allow for `context` at `now`: `couldAllow` says no (conditions without arguments
 * count as possibly true, so a conditional rule never makes a target "never").
 */
export function neverAllowed(
  set: CapabilitySet,
  targets: readonly ReachTarget[],
  context: Omit<CheckContext, 'args' | 'annotations'>,
  rules: readonly RuleInfo[] = set.rules,
): NeverAllowed[] {
  const byId = new Map(rules.map((r) => [r.id, r]));
  return targets.flatMap((target) => {
    const ctx = { ...context, annotations: target.annotations };
    if (set.couldAllow(target.resource, target.action, ctx)) return [];
    const decision = set.check(target.resource, target.action, ctx);
    const rule = decision.ruleId === undefined ? undefined : byId.get(decision.ruleId);
    return [
      {
        target,
        effect: decision.effect === 'deny' ? 'deny' : 'default-deny',
        rule: decision.effect === 'deny' ? decision.ruleId : undefined,
        until: decision.effect === 'deny' ? rule?.expiresAt : undefined,
      },
    ];
  });
}

/** A rule that can never match. */
export type RuleFinding =
  | {
      /** An allow or ask rule every request of which an unconditional deny also matches: deny wins, always. */
      readonly kind: 'shadowed';
      readonly rule: RuleInfo;
      readonly by: RuleInfo;
    }
  | { readonly kind: 'expired'; readonly rule: RuleInfo }
  | {
      /** An `mcp:` pattern that matches no tool, server request or skill of the project's servers. */
      readonly kind: 'dead';
      readonly rule: RuleInfo;
    };

/** What is known of the project's servers, for dead patterns. */
export interface KnownServers {
  /** Every configured server, with its tool names when known (connected, or pinned), else undefined. */
  readonly servers: ReadonlyMap<string, readonly string[] | undefined>;
}

/**
 * The rules of `rules` that can never match at `now` or after: expired, shadowed by an unconditional deny of
 * `rules` or of `denies` (the rules of the set it derives from), or an `mcp:` pattern that matches no tool or server
 * request of `known` (judged only where every server it could name has a known tool list).
 */
export function ruleFindings(
  rules: readonly RuleInfo[],
  known: KnownServers,
  now: number,
  denies: readonly RuleInfo[] = [],
): RuleFinding[] {
  const compiled = new Map<RuleInfo, CompiledPattern>();
  const pattern = (r: RuleInfo) => {
    let p = compiled.get(r);
    if (p === undefined) {
      p = compilePattern(r.pattern);
      compiled.set(r, p);
    }
    return p;
  };
  const blockers = [...rules, ...denies].filter(
    (d) => d.effect === 'deny' && d.condition === 'none' && d.expiresAt === undefined,
  );
  const out: RuleFinding[] = [];
  for (const rule of rules) {
    if (rule.expiresAt !== undefined && now >= rule.expiresAt) {
      out.push({ kind: 'expired', rule });
      continue;
    }
    if (rule.effect !== 'deny') {
      const by = blockers.find((d) => actionsCover(d, rule) && patternCovers(pattern(d), pattern(rule)));
      if (by !== undefined) {
        out.push({ kind: 'shadowed', rule, by });
        continue;
      }
    }
    if (isDead(rule, pattern(rule), known)) out.push({ kind: 'dead', rule });
  }
  return out;
}

/** Whether every action of `rule` is one of `by`'s. */
function actionsCover(by: RuleInfo, rule: RuleInfo): boolean {
  if (by.actions.includes('*')) return true;
  return !rule.actions.includes('*') && rule.actions.every((a) => by.actions.includes(a));
}

/** Whether an `mcp:` pattern provably matches no tool and no server request of the known servers. */
function isDead(rule: RuleInfo, p: CompiledPattern, known: KnownServers): boolean {
  if (p.scheme !== 'mcp') return false;
  const any = rule.actions.includes('*');
  const execute = any || rule.actions.includes('execute');
  const request = any || rule.actions.includes('request');
  // A skill (`read` on `mcp:{server}:skill:{name}`, four segments): skill names are not known here, so a pattern that
  // could have a fourth segment is never judged dead for them.
  const skills = (any || rule.actions.includes('read')) && (p.segments.length >= 3 || p.tail !== undefined);
  // The servers the pattern could name: its literal one (none when the project has no such server), or every one.
  const servers = p.key === undefined ? [...known.servers.keys()] : known.servers.has(p.key) ? [p.key] : [];
  for (const server of servers) {
    if (skills) return false;
    if (request && SERVER_REQUEST_KINDS.some((k) => matchPattern(p, resourceFor.serverRequest(server, k)))) {
      return false;
    }
    if (!execute) continue;
    const tools = known.servers.get(server);
    if (tools === undefined) return false; // not known: it could name a tool of this server
    if (tools.some((t) => matchPattern(p, resourceFor.tool(server, t)))) return false;
  }
  return true;
}
