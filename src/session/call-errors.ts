/**
 * What a failed or refused tool call means for the model: the decision, the reason, and the text the model is
 * told. One place, so the agent loop and the framework adapters (src/adapters) tell models the same thing.
 */
import { InterlockError, PermissionDeniedError, ToolNotFoundError } from '../errors.js';
import type { StepDecision } from './types.js';

/** A thrown call error, classified. */
export interface ClassifiedCallError {
  decision: StepDecision;
  reason?: string | undefined;
  ruleId?: string | undefined;
  code?: string | undefined;
  output: string;
}

/** What a thrown call error means for the step, and what the model is told. */
export function classifyCallError(err: unknown): ClassifiedCallError {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof PermissionDeniedError) {
    return {
      decision: 'deny',
      reason: err.reason,
      ruleId: err.rule?.id,
      code: err.code,
      output: `Error: ${message} This call is not allowed, so do not retry it; use another tool or tell the user what you could not do.`,
    };
  }
  if (err instanceof InterlockError) {
    if (err.code === 'AUDIT_FAILED' || err.code === 'TOOL_DEFINITION_CHANGED') {
      return {
        decision: 'deny',
        reason: message,
        code: err.code,
        output: `Error: ${message} Do not retry this call.`,
      };
    }
    if (err instanceof ToolNotFoundError) {
      return { decision: 'skipped', reason: message, code: err.code, output: `Error: ${message}` };
    }
    return { decision: 'allow', code: err.code, output: `Error: ${message}` };
  }
  return { decision: 'allow', code: undefined, output: `Error: ${message}` };
}
