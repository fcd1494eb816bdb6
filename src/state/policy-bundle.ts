/**
 * The documents a shared policy keeps in the store (issue 38, "validate every document read from the store"): the
 * bundle (a revision and its policy) and each process's member record (the revision it applied). Everything read
 * back is parsed here with a schema before it is used; a document that does not parse is never applied.
 */
import { z } from 'zod';
import { type Policy, parsePolicy } from '../security/policy.js';
import { StateInvalidError } from './types.js';

/**
 * The highest revision a bundle may carry: one below the largest safe integer, so the next revision is still exact.
 * A bundle at 2^53 would make `version + 1 === version`, and a revoke would publish a revision nobody applies.
 */
export const MAX_POLICY_VERSION = Number.MAX_SAFE_INTEGER - 1;

const VersionSchema = z.number().int().min(1).max(MAX_POLICY_VERSION);

const BundleSchema = z.strictObject({
  version: VersionSchema,
  policy: z.unknown(),
  /** Set when a process wrote back the bundle it held after the store lost it (not a new revision). */
  restored: z.literal(true).optional(),
});

const MemberSchema = z.strictObject({
  version: z.union([z.literal(0), VersionSchema]),
  /** The member's lease: a writer waits for the longest lease among the members before it gives up on one. */
  leaseMs: z.number().int().min(1).max(600_000),
});

/** What a member record says: the revision its process applied, and its lease. */
export type MemberRecord = z.infer<typeof MemberSchema>;

/** A revision of a shared policy, as stored. */
export interface Bundle {
  readonly version: number;
  readonly policy: Policy;
  readonly restored?: true | undefined;
}

/** A bundle read from the store: its exact text (for compare-and-set) and the parsed bundle, or why it is invalid. */
export type StoredBundle =
  | { readonly text: string; readonly bundle: Bundle; readonly problem?: undefined }
  | { readonly text: string; readonly bundle?: undefined; readonly problem: StateInvalidError };

/** Parses a stored bundle; never throws: an invalid one comes back with its `problem`. */
export function parseBundle(text: string, name: string): StoredBundle {
  const invalid = (why: string, cause?: unknown): StoredBundle => ({
    text,
    problem: new StateInvalidError(
      `The shared policy '${name}' in the store is invalid (${why}); it is not used and this process refuses what it cannot decide. Publish the policy again (interlock policy publish) to replace it, and check who can write to the store.`,
      { cause },
    ),
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return invalid('not JSON', err);
  }
  const parsed = BundleSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return invalid(`${issue?.path.join('.') || '(root)'}: ${issue?.message}`, parsed.error);
  }
  try {
    const policy = parsePolicy(parsed.data.policy);
    const { version, restored } = parsed.data;
    return { text, bundle: restored === true ? { version, policy, restored } : { version, policy } };
  } catch (err) {
    return invalid((err as Error).message, err);
  }
}

/** The text of a bundle, as written. */
export function bundleText(bundle: Bundle): string {
  return JSON.stringify(bundle);
}

/** A member record read from the store; undefined when it is invalid (its process is then counted as lagging). */
export function parseMember(text: string): MemberRecord | undefined {
  try {
    const parsed = MemberSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The text of a member record. */
export function memberText(record: MemberRecord): string {
  return JSON.stringify(record);
}
