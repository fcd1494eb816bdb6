/**
 * The policy format's zod schemas as the public constants of `mcp-interlock/security`. Only the area's entry
 * imports this module, so importing the interop entry (which needs the capability set, not these constants)
 * builds no policy schema; code inside the package calls the memoized builders, which return these same objects.
 */
import { conditionSchemas } from './conditions.js';
import { policySchemas } from './policy.js';

/** A whole policy: `{ version: 1, rules: [...] }`, checked in full (see `parsePolicy`). */
export const PolicySchema = policySchemas().policy;
/** One rule of a policy. */
export const PolicyRuleSchema = policySchemas().rule;
/** A declarative condition (`when`): every part given must hold. */
export const RuleConditionSchema = conditionSchemas().ruleCondition;
/** Constraints on one argument of a condition. */
export const ArgConstraintSchema = conditionSchemas().argConstraint;
