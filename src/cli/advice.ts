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

/** Advice for one project: knows where its policy lives and how that file is written. */
export class Advisor {
  readonly #config: Pick<InterlockConfig, 'file' | 'policy' | 'policyFile'>;
  readonly #cwd: string;
  readonly #explainer: VerdictExplainer;

  constructor(
    config: Pick<InterlockConfig, 'file' | 'policy' | 'policyFile'>,
    cwd: string,
    explainer: VerdictExplainer,
  ) {
    this.#config = config;
    this.#cwd = cwd;
    this.#explainer = explainer;
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
    if (verdict.effect === 'default-deny' && !this.#explainer.ruleCovers(resource, action)) {
      const rule: SuggestedRule = { effect: 'allow', resource, actions: action };
      return {
        reason: defaultDenyReason(resource, action),
        fix: `to allow it, add this rule to ${this.#where()}:\n${this.#snippet(rule)}`,
        rule,
      };
    }
    const id = verdict.rule?.id;
    let fix: string | undefined;
    if (verdict.effect === 'deny' && id !== undefined) {
      fix = `deny rules win over allow rules: to allow it, remove rule '${id}' from ${file} or narrow its resource`;
    } else if (verdict.effect === 'ask' && id !== undefined) {
      fix = `run it on a terminal to approve it (interlock call asks only when stdin and stderr are a terminal, without --json), or make rule '${id}' 'effect: allow' in ${file}`;
    } else {
      fix = conditionHint;
    }
    return { reason: verdict.reason, fix, rule: undefined };
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
