/**
 * Policies as data (issue 3): the format a JSON or YAML file holds, validated with zod. The schema is
 * the source of the TypeScript types. Unknown keys are refused everywhere, so a typo (`action` for
 * `actions`, `arg` for `args`) is an error rather than a rule that silently matches nothing.
 */
import { z } from 'zod';
import { describeIssues, toConfigIssues } from '../config-issues.js';
import { PolicyError } from '../errors.js';
import { lazySchema, once } from '../lazy.js';
import { findDangerousKey, RuleConditionSchema } from './conditions.js';
import { MAX_PATTERN_LENGTH } from './pattern.js';

/** The policy format version this code reads and writes. */
export const POLICY_VERSION = 1;
/** Most rules a policy may hold. */
export const MAX_POLICY_RULES = 100_000;

/** An action name: `*`, or letters, digits, `_`, `-`, `.`. */
const Action = once(() =>
  z
    .string()
    .regex(/^(?:\*|[A-Za-z][A-Za-z0-9_.-]{0,63})$/, { message: "an action is '*' or a name like 'execute'" }),
);

/** A rule id: no ':' (so it can never be mistaken for a pattern by `revoke`), no spaces. */
export const RULE_ID_RE = /^[A-Za-z0-9_.@/-]{1,128}$/;

// Issue 15, import time: the schemas are built at their first use, not when an entry point reaching this file is
// imported. Field descriptions live on the schemas (`.describe()`): the API reference, the project file's reference page
// and its JSON Schema are generated from them.

/** One rule of a policy. */
export const PolicyRuleSchema = lazySchema(() =>
  z
    .strictObject({
      id: z
        .string()
        .regex(RULE_ID_RE, { message: 'an id is 1-128 characters from A-Z a-z 0-9 _ . @ / -' })
        .optional()
        .describe(
          'Stable id, used by revoke and shown in decisions, denials and audit records; generated when absent. No ":".',
        ),
      effect: z
        .enum(['allow', 'deny', 'ask'])
        .describe(
          'allow grants; deny refuses and beats every allow; ask needs a human approval and beats allow.',
        ),
      resource: z
        .string()
        .min(1)
        .max(MAX_PATTERN_LENGTH)
        .describe(
          'The resource pattern, e.g. `mcp:notes:read_*` (a tool: `mcp:{server}:{tool}`); `*` matches within a segment, a final `**` matches the rest.',
        ),
      actions: z
        .union([Action(), z.array(Action()).min(1).max(64)], {
          error: "actions is an action name ('execute', 'read', 'get' or '*') or a non-empty list of them",
        })
        .describe(
          'The action or a list of them: `execute` for tools, `read` for resources, `get` for prompts, `*` for any.',
        ),
      description: z.string().max(1000).optional().describe('Shown in decisions and denials.'),
      expiresAt: z.iso
        .datetime({ offset: true })
        .optional()
        .describe(
          'ISO 8601 time with an offset (2026-01-01T00:00:00Z); the rule stops applying at that instant.',
        ),
      maxCalls: z
        .number()
        .int()
        .positive()
        .max(Number.MAX_SAFE_INTEGER)
        .optional()
        .describe('Allow rules only: how many calls this rule lets through.'),
      per: z
        .string()
        .regex(/^[1-9][0-9]{0,8}(?:ms|s|m|h|d)$/, { message: "a window such as '30s', '5m', '1h' or '1d'" })
        .optional()
        .describe(
          "With maxCalls: the window the quota counts in ('30s', '5m', '1h', '1d'), aligned to the clock. Without it, maxCalls counts without a window.",
        ),
      when: RuleConditionSchema.optional(),
    })
    .describe('One rule of a policy.'),
);

/** A whole policy: `{ version: 1, rules: [...] }`. */
export const PolicySchema = lazySchema(() =>
  z
    .strictObject({
      version: z.literal(POLICY_VERSION).describe('The policy format version: 1.'),
      rules: z
        .array(PolicyRuleSchema)
        .max(MAX_POLICY_RULES)
        .describe('The rules. A call no rule allows is denied; deny beats ask, ask beats allow.'),
    })
    .describe('A capability policy: version and rules.'),
);

export type Policy = z.infer<typeof PolicySchema>;
export type PolicyRule = z.infer<typeof PolicyRuleSchema>;

/** Parses one value with a zod schema; throws `PolicyError` naming every bad field. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, what: string, prefix = ''): T {
  const danger = findDangerousKey(value, prefix);
  if (danger !== undefined) {
    throw new PolicyError(
      `Invalid ${what}: ${danger}: refused ('__proto__', 'constructor' and 'prototype' keys and non-plain objects could pollute prototypes).`,
    );
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    // `rules[2].when.args.path`
    const list = describeIssues(toConfigIssues(result.error, prefix));
    throw new PolicyError(`Invalid ${what}: ${list}.`, { cause: result.error });
  }
  return result.data;
}

/**
 * Validates a policy object (from `JSON.parse` or a YAML parser). Throws `PolicyError` naming the rule
 * index and field of every problem the schema finds. Patterns, actions and regular expressions are
 * checked further by `CapabilitySet.fromPolicy`.
 */
export function parsePolicy(value: unknown): Policy {
  return parseWith(PolicySchema, value, 'policy');
}
