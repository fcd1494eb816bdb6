/**
 * What the CLI tells a person to do about a verdict (issue 18, item 8). The library's reasons speak to programs
 * (`grant(...)`, `manager.approveToolChange(...)`); at the command line the fix is a rule to add to the policy,
 * written as the policy file is written (YAML or JSON), or an `interlock` command. Each reason is said once:
 * a reason that names its rule is not followed by the rule again.
 */
import { relative } from 'node:path';
import { stringify } from 'yaml';
import type { InterlockConfig } from '../config/load.js';
import type { ToolVerdict, VerdictExplainer } from './verdict.js';

/** A policy rule as the user writes it in the project or policy file. */
export interface SuggestedRule {
  effect: 'allow';
  resource: string;
  actions: string;
}

/** A verdict with its reason in CLI terms and, when the call is not allowed, what to change. */
export interface Advice {
  reason: string;
  /** One or more lines: what to change, as a rule to add or a command to run. */
  fix: string | undefined;
  /** For a plain default deny: the rule that would allow the call. */
  rule: SuggestedRule | undefined;
}

/** A default deny no rule comes near, in CLI terms: the library's reason adds the `grant(...)` a program would call. */
export function defaultDenyReason(resource: string, action: string): string {
  return `No rule allows '${action}' on '${resource}' (default deny).`;
}

/**
 * Where the deciding policy came from when it is not the project file: a version of a policy the fleet shares
 * through Redis (`state.policy`). A fix then has to reach the fleet: `interlock policy publish` (issue 39).
 */
export interface SharedPolicySource {
  /** The shared policy's name (`state.policy.name`). */
  name: string;
  /** The version that decided. */
  version: number;
  /** The verdicts of the project file's own policy, to tell a rule revoked from the fleet from a missing one. */
  file: VerdictExplainer | undefined;
}

/** Advice for one project: knows where its policy lives, how that file is written, and whether a fleet shares it. */
export class Advisor {
  readonly #config: Pick<InterlockConfig, 'file' | 'policy' | 'policyFile'>;
  readonly #cwd: string;
  readonly #explainer: VerdictExplainer;
  readonly #shared: SharedPolicySource | undefined;

  constructor(
    config: Pick<InterlockConfig, 'file' | 'policy' | 'policyFile'>,
    cwd: string,
    explainer: VerdictExplainer,
    shared?: SharedPolicySource,
  ) {
    this.#config = config;
    this.#cwd = cwd;
    this.#explainer = explainer;
    this.#shared = shared;
  }

  /** The file the policy is in, as the user would type it (relative to the working directory). */
  get policyFileShown(): string {
    return this.#shown(this.#config.policyFile ?? this.#config.file);
  }

  /** Reason and fix for a verdict on `action` on `resource`. */
  advise(
    verdict: Pick<ToolVerdict, 'effect' | 'reason' | 'rule'>,
    resource: string,
    action: string,
    conditionHint?: string,
  ): Advice {
    const file = this.policyFileShown;
    const shared = this.#shared;
    if (verdict.effect === 'default-deny' && !this.#explainer.ruleCovers(resource, action)) {
      const reason = defaultDenyReason(resource, action);
      if (shared?.file?.ruleCovers(resource, action) === true) {
        // The file has the rule; the fleet's version does not (it was revoked): adding it again would change nothing.
        return {
          reason,
          fix: `${file} has a rule that allows it, but ${this.#sharedName()} does not (it was revoked): to allow it, publish the file's policy to the fleet: interlock policy publish`,
          rule: undefined,
        };
      }
      const rule: SuggestedRule = { effect: 'allow', resource, actions: action };
      return {
        reason,
        fix: `to allow it, add this rule to ${this.#where()}:\n${this.#snippet(rule)}${this.#publish()}`,
        rule,
      };
    }
    const id = verdict.rule?.id;
    let fix: string | undefined;
    if (verdict.effect === 'deny' && id !== undefined) {
      fix = `deny rules win over allow rules: to allow it, remove rule '${id}' from ${file} or narrow its resource${this.#publish()}`;
    } else if (verdict.effect === 'ask' && id !== undefined) {
      fix = `run it on a terminal to approve it (interlock call asks only when stdin and stderr are a terminal, without --json), or make rule '${id}' 'effect: allow' in ${file}${this.#publish()}`;
    } else {
      fix = conditionHint;
    }
    return { reason: verdict.reason, fix, rule: undefined };
  }

  /** `the shared policy 'team' (version 2)`. */
  #sharedName(): string {
    const shared = this.#shared;
    return shared === undefined
      ? 'the policy'
      : `the shared policy '${shared.name}' (version ${shared.version})`;
  }

  /** With a shared policy, a change to the file reaches the fleet only once published. */
  #publish(): string {
    return this.#shared === undefined
      ? ''
      : `\nthen publish it, since this project decides with ${this.#sharedName()}: interlock policy publish`;
  }

  /** Where a new rule goes: `policy.rules in interlock.config.yaml`, `the rules of policy.yaml`, ... */
  #where(): string {
    const { policy, policyFile, file } = this.#config;
    if (policy === undefined) return `${this.#shown(file)} (it has no policy yet)`;
    if (policyFile === undefined || policyFile === file) return `policy.rules in ${this.#shown(file)}`;
    return `the rules in ${this.#shown(policyFile)}`;
  }

  /** The rule as the file is written: block YAML (a whole `policy:` section when there is none), or JSON. */
  #snippet(rule: SuggestedRule): string {
    const { policy, policyFile, file } = this.#config;
    const target = policyFile ?? file;
    if (/\.json$/i.test(target)) {
      const json = `{ ${Object.entries(rule)
        .map(([key, value]) => `"${key}": ${JSON.stringify(value)}`)
        .join(', ')} }`;
      return policy === undefined ? `"policy": { "version": 1, "rules": [${json}] }` : json;
    }
    const yaml = stringify([rule]).trimEnd();
    return policy === undefined ? `policy:\n  version: 1\n  rules:\n${indent(yaml, 4)}` : yaml;
  }

  #shown(path: string): string {
    const rel = relative(this.#cwd, path);
    return rel === '' || rel.startsWith('..') ? path : rel;
  }
}

/** `text` with every line indented by `n` spaces. */
export function indent(text: string, n: number): string {
  const pad = ' '.repeat(n);
  return text
    .split('\n')
    .map((line) => (line === '' ? line : `${pad}${line}`))
    .join('\n');
}
