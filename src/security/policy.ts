/**
 * Policies as data (issue 3): the format a JSON or YAML file holds. One zod schema does the whole check (issue 15,
 * "config parsed once"): shape, unknown keys (so a typo such as `action` for `actions` is an error rather than a
 * rule that silently matches nothing), patterns, actions, quotas, regular expressions, unique ids and plain data,
 * each problem at the path to fix. Its output type is {@link Policy}, and what it accepts `CapabilitySet.fromPolicy`
 * loads. The schemas are built on first use.
 */

import { z } from 'zod';
import { once } from '../lazy.js';
import { conditionSchemas } from './conditions.js';
import { flowLabelSchemas } from './flow-labels.js';
import { parseWith, plainData } from './parse.js';
import { MAX_PATTERN_LENGTH, trimStop } from './pattern.js';
import { compileRule, isProblem, RULE_ID_MESSAGE, RULE_ID_RE } from './rules.js';

/** The policy format version this code reads and writes. */
export const POLICY_VERSION = 1;
/** Most rules a policy may hold. */
export const MAX_POLICY_RULES = 100_000;

/** The policy schemas, built on first use (importing the security area builds no schema: issue 15). */
export const policySchemas = once(buildPolicySchemas);

function buildPolicySchemas() {
  /** An action name: `*`, or letters, digits, `_`, `-`, `.`. */
  const Action = z
    .string()
    .regex(/^(?:\*|[A-Za-z][A-Za-z0-9_.-]{0,63})$/, { message: "an action is '*' or a name like 'execute'" });

  // Field descriptions live on the schemas (`.describe()`): the API reference, the project file's reference page
  // and its JSON Schema are generated from them.

  /** One rule of a policy. */
  const rule = z
    .strictObject({
      id: z
        .string()
        .regex(RULE_ID_RE, { message: RULE_ID_MESSAGE })
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
        .union([Action, z.array(Action).min(1).max(64)], {
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
      when: conditionSchemas().ruleCondition.optional(),
    })
    // What the fields mean together (a pattern and its actions, a quota on an allow, annotations on a deny) is
    // checked by compiling the rule, the same check `grant`, `deny` and `ask` make; only once every field is valid,
    // so a problem is reported once, at its field.
    .superRefine(
      (value, ctx) => {
        const { effect, resource, actions, ...options } = value;
        const compiled = compileRule(
          { effect, pattern: resource, actions, options },
          0,
          value.id ?? 'rule',
          0,
        );
        if (isProblem(compiled)) {
          ctx.addIssue({
            code: 'custom',
            path: compiled.field.split('.'),
            message: trimStop(compiled.message),
          });
        }
      },
      { when: (payload) => payload.issues.length === 0 },
    )
    .describe('One rule of a policy.');

  /** Rule ids are unique across the rules (`revoke` and decisions name a rule by its id). */
  const uniqueIds = (rules: readonly z.output<typeof rule>[], ctx: z.RefinementCtx, at: PropertyKey[]) => {
    const first = new Map<string, number>();
    rules.forEach((r, i) => {
      if (r.id === undefined) return;
      const seen = first.get(r.id);
      if (seen === undefined) first.set(r.id, i);
      else
        ctx.addIssue({
          code: 'custom',
          path: [...at, i, 'id'],
          message: `a rule with id '${r.id}' already exists (rules[${seen}]); give each rule its own id`,
        });
    });
  };

  const rules = z
    .array(rule)
    .max(MAX_POLICY_RULES)
    .describe('The rules. A call no rule allows is denied; deny beats ask, ask beats allow.');

  /** A whole policy: `{ version: 1, labels?, flow?, rules: [...] }`. */
  const policy = plainData(
    z
      .strictObject({
        version: z.literal(POLICY_VERSION).describe('The policy format version: 1.'),
        labels: flowLabelSchemas().entries.optional(),
        flow: flowLabelSchemas().settings.optional(),
        rules,
      })
      .superRefine((p, ctx) => uniqueIds(p.rules, ctx, ['rules']))
      .describe('A capability policy: version and rules.'),
  );

  return {
    rule,
    policy,
    /** Rules given alone (`derive`): plain data, valid rules, unique ids. */
    ruleList: plainData(rules.superRefine((list, ctx) => uniqueIds(list, ctx, []))),
  };
}

type PolicySchemas = ReturnType<typeof buildPolicySchemas>;
/** A valid policy: what the policy schema outputs. */
export type Policy = z.output<PolicySchemas['policy']>;
/** One rule of a {@link Policy}. */
export type PolicyRule = z.output<PolicySchemas['rule']>;

/**
 * Validates a policy object (from `JSON.parse` or a YAML parser): everything `CapabilitySet.fromPolicy` checks.
 * Throws `PolicyError` naming the rule index and field of every problem.
 */
export function parsePolicy(value: unknown): Policy {
  return parseWith(policySchemas().policy, value, 'policy');
}
