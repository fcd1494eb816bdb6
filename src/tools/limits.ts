/**
 * Caps on the size and shape of tool arguments, checked before validation and before anything is sent (issue 14,
 * item 10): a model, or whoever steers it, can write arguments big or deep enough to stall the event loop in
 * validation, in the gate's conditions or in serialization. The walk stops at the first limit it crosses.
 */
import type { ToolInputIssue } from '../errors.js';

/** Limits on one call's arguments. */
export interface ArgumentLimits {
  /** Text in the arguments (string and key lengths, 8 per number), roughly bytes. @default DEFAULT_MAX_ARGUMENT_BYTES */
  maxBytes?: number | undefined;
  /** Nesting of objects and arrays. @default DEFAULT_MAX_ARGUMENT_DEPTH */
  maxDepth?: number | undefined;
  /** Values in all (objects, arrays, strings, numbers...). @default DEFAULT_MAX_ARGUMENT_NODES */
  maxNodes?: number | undefined;
}

/** 4 MiB of argument text. */
export const DEFAULT_MAX_ARGUMENT_BYTES = 4 * 1024 * 1024;
/** 64 levels of nesting. */
export const DEFAULT_MAX_ARGUMENT_DEPTH = 64;
/** 100 000 values. */
export const DEFAULT_MAX_ARGUMENT_NODES = 100_000;

/**
 * The issue with `args` when they cross a limit (naming the limit and the option that raises it), or undefined.
 * Cost: one pass over the arguments, stopped early.
 */
export function argumentLimitIssue(args: unknown, limits: ArgumentLimits = {}): ToolInputIssue | undefined {
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_ARGUMENT_BYTES;
  const maxDepth = limits.maxDepth ?? DEFAULT_MAX_ARGUMENT_DEPTH;
  const maxNodes = limits.maxNodes ?? DEFAULT_MAX_ARGUMENT_NODES;
  let bytes = 0;
  let nodes = 0;
  // Two parallel stacks, values and their depths: no pair allocated per value walked.
  const values: unknown[] = [args];
  const depths: number[] = [0];
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop() as number;
    if (++nodes > maxNodes) {
      return issue(`hold more than ${maxNodes} values`, 'argumentLimits.maxNodes');
    }
    if (typeof value === 'string') bytes += value.length;
    else if (typeof value === 'object' && value !== null) {
      if (depth >= maxDepth)
        return issue(`are nested deeper than ${maxDepth} levels`, 'argumentLimits.maxDepth');
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) {
          values.push(value[i]);
          depths.push(depth + 1);
        }
      } else {
        // Own enumerable keys, as Object.keys gives them, without the array it allocates.
        for (const key in value) {
          if (!Object.hasOwn(value, key)) continue;
          bytes += key.length;
          values.push((value as Record<string, unknown>)[key]);
          depths.push(depth + 1);
        }
      }
    } else bytes += 8;
    if (bytes > maxBytes) {
      return issue(`are larger than ${maxBytes} bytes of text`, 'argumentLimits.maxBytes');
    }
  }
  return undefined;
}

function issue(what: string, option: string): ToolInputIssue {
  return {
    field: '',
    message: `the arguments ${what}; send less, or raise ${option} of the manager if the tool needs it`,
  };
}
