/**
 * The policy format as the project file documents it: the security area's schemas with a description on
 * every field, for the shipped JSON Schema (editor hovers) and the reference page. Fields come from the
 * security schemas' shapes, so a new field shows up here by itself; validation always uses `PolicySchema`.
 */
import { z } from 'zod';
import { ArgConstraintSchema, RuleConditionSchema } from '../security/conditions.js';
import { MAX_POLICY_RULES, PolicyRuleSchema, PolicySchema } from '../security/policy.js';

const RULE_DOCS: Readonly<Record<string, string>> = {
  id: 'Stable id, shown in decisions, denials and audit records; generated when absent. No ":".',
  effect: 'allow grants; deny refuses and beats every allow; ask needs a human approval and beats allow.',
  resource:
    'The resource pattern, e.g. mcp:notes:read_* (a tool: mcp:{server}:{tool}); * matches within a segment, a final ** matches the rest.',
  actions:
    "The action or a list of them: execute for tools, read for resources, get for prompts, '*' for any.",
  description: 'Shown in decisions and denials.',
  expiresAt: 'ISO 8601 time with an offset (2026-01-01T00:00:00Z); the rule stops applying then.',
  maxCalls: 'Allow rules only: how many calls this rule lets through.',
  when: 'A condition on the call; every part given must hold.',
};

const WHEN_DOCS: Readonly<Record<string, string>> = {
  args: 'Constraints on the arguments, by argument name.',
  agent: 'Constraints on the agent name (equals, oneOf, startsWith, pattern).',
  annotations: 'Tool annotation values to match. Untrusted server hints: deny and ask rules only.',
};

const ARG_DOCS: Readonly<Record<string, string>> = {
  equals: 'The value equals this JSON scalar (same type).',
  oneOf: 'The value is one of these JSON scalars.',
  startsWith: 'String prefix; a prefix starting with / compares normalized paths, segment by segment.',
  pattern: 'A safe regular expression the whole string must match.',
  maxLength: 'Most characters a string (or items an array) may have.',
  min: 'Smallest number allowed (inclusive).',
  max: 'Largest number allowed (inclusive).',
  each: 'Constraints every item of an array must meet (an empty array meets them); the same keys but each.',
};

function described(shape: Record<string, z.ZodType>, docs: Readonly<Record<string, string>>) {
  return Object.fromEntries(
    Object.entries(shape).map(([key, field]) => {
      const doc = docs[key];
      return [key, field.description === undefined && doc !== undefined ? field.describe(doc) : field];
    }),
  );
}

const ArgDocSchema = z.strictObject(described(ArgConstraintSchema.shape, ARG_DOCS));

const argsRecord = RuleConditionSchema.shape.args.unwrap();

const WhenDocSchema = z.strictObject({
  ...described(RuleConditionSchema.shape, WHEN_DOCS),
  args: z
    .record(argsRecord.keyType, ArgDocSchema)
    .optional()
    .describe(WHEN_DOCS.args ?? ''),
});

const RuleDocSchema = z.strictObject({
  ...described(PolicyRuleSchema.shape, RULE_DOCS),
  when: WhenDocSchema.optional().describe(RULE_DOCS.when ?? ''),
});

/** `PolicySchema` with descriptions, for the JSON Schema and the docs. */
export const PolicyDocSchema = z
  .strictObject({
    version: PolicySchema.shape.version.describe('The policy format version: 1.'),
    rules: z
      .array(RuleDocSchema)
      .max(MAX_POLICY_RULES)
      .describe('The rules. A call no rule allows is denied; deny beats ask, ask beats allow.'),
  })
  .describe('A capability policy: version and rules.');
