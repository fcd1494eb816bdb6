/**
 * Publishing the project file's policy from the operator console (issue 41). The console does not read project
 * files or run policy tests itself: `interlock serve` gives the gateway a publisher that re-reads the file, runs
 * exactly the checks of `interlock policy publish`, and publishes. The console shows what would be published and
 * binds its button to the hash of the policy shown, so a policy changed on disk since is not published.
 */
import { createHash } from 'node:crypto';
import type { Policy, PolicyRule } from '../../security/policy.js';
import type { Notice } from './panels.js';

/** What the publish button would publish: the project file's policy as it is on disk now. */
export interface PublishPreview {
  /** The policy's hash (SHA-256 of its JSON): the publish button is bound to it. */
  readonly hash: string;
  /** The file's policy; none: the file has no policy to publish. */
  readonly policy: Policy | undefined;
  /** The policy tests' result; none: the project has no tests file. */
  readonly tests?:
    | { readonly file: string; readonly passed: number; readonly failed: readonly string[] }
    | undefined;
  /** Whether a publish needs the review hash of the policy's diff (`state.policy.requireReview`). */
  readonly requireReview: boolean;
  /** Why the project file could not be read, when it could not (nothing can be published then). */
  readonly problem?: string | undefined;
}

/** Publishes the project file's policy for the console (`interlock serve` passes one). */
export interface ConsolePublisher {
  /** Reads the project file again and runs the policy tests: what a publish would publish now. */
  preview(): Promise<PublishPreview>;
  /**
   * Reads the project file again and publishes its policy when its hash is still `hash`, the policy tests pass,
   * and (with `requireReview`) `reviewed` is its diff's review hash. Resolves to the new version; a refusal is a
   * coded error whose message says why.
   */
  publish(hash: string, reviewed: string | undefined): Promise<number>;
}

/** The hash a publish is bound to. */
export function policyHash(policy: Policy | undefined): string {
  return createHash('sha256')
    .update(JSON.stringify(policy ?? null))
    .digest('hex');
}

/** The rules a publish adds, removes and changes, against the shared policy's current version (by rule id). */
export interface PolicyChanges {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly string[];
}

export function policyChanges(current: Policy | undefined, next: Policy | undefined): PolicyChanges {
  const byKey = (policy: Policy | undefined) =>
    new Map((policy?.rules ?? []).map((rule) => [ruleKey(rule), JSON.stringify(rule)]));
  const before = byKey(current);
  const after = byKey(next);
  return {
    added: [...after.keys()].filter((key) => !before.has(key)),
    removed: [...before.keys()].filter((key) => !after.has(key)),
    changed: [...after].filter(([key, json]) => before.has(key) && before.get(key) !== json).map(([k]) => k),
  };
}

/** A rule's id, or (without one) its effect and resource. */
function ruleKey(rule: PolicyRule): string {
  return rule.id ?? `${rule.effect} ${rule.resource} (no id)`;
}

/** What a publish from the console's form came to: the notice to show and what to audit. */
export interface PublishOutcome {
  readonly hash: string;
  readonly allowed: boolean;
  readonly notice: Notice;
  /** The audit record's reason (the console adds where the request came from). */
  readonly reason: string;
}

/** Publishes what the form names (the hash of the policy shown, and a review hash if one was typed). */
export async function publishFromForm(
  publisher: ConsolePublisher,
  form: Record<string, unknown>,
): Promise<PublishOutcome> {
  const hash = String(form.hash ?? '');
  const typed = typeof form.reviewed === 'string' ? form.reviewed.trim() : '';
  if (!/^[0-9a-f]{64}$/.test(hash)) {
    const error = 'Nothing was published: the form names no policy. Reload the panel.';
    return { hash, allowed: false, notice: { error }, reason: 'refused: no policy hash in the form' };
  }
  try {
    const version = await publisher.publish(hash, typed === '' ? undefined : typed);
    return {
      hash,
      allowed: true,
      notice: { done: `Published policy ${hash.slice(0, 12)}: the shared policy is at version ${version}.` },
      reason: `published policy ${hash.slice(0, 12)} as version ${version}`,
    };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const hint = hintOf(err);
    return {
      hash,
      allowed: false,
      notice: { error: hint === undefined ? message : `${message} (${hint})` },
      reason: `refused: ${message}`,
    };
  }
}

/** The operator advice of a refusal (a coded error's `operatorHint`, or the CLI's hint). */
function hintOf(err: unknown): string | undefined {
  const e = err as { operatorHint?: unknown; hint?: unknown } | null;
  const hint = e?.hint ?? e?.operatorHint;
  return typeof hint === 'string' ? hint : undefined;
}
