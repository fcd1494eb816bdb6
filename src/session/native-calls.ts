/**
 * The statistics and events of an agent's native tool calls (issue 15), as two stages of the native tool pipeline
 * (native-tool.ts): one before authorize, which numbers the call and reports a refusal, and one after it, which
 * counts the call and reports how it ended, the way the resend stage does for MCP tool calls (src/interop/call-path.ts).
 */
import { isInterlockError } from '../errors.js';
import { TypedEvents } from '../interop/events.js';
import type { Invocation, Terminal } from '../interop/pipeline.js';
import { CallStats } from '../interop/stats.js';
import type { ToolCallResult } from '../tools/normalize.js';
import { classifyCallError } from './call-errors.js';
import type { AgentSessionEvents, NativeToolCallRef, NativeToolHealth } from './events.js';

/** One agent's native tool calls: their figures by tool, and the agent's events. */
export class NativeCalls {
  /** The agent's events; the agent exposes `on`, `once` and `off` over them. */
  readonly events = new TypedEvents<AgentSessionEvents>();
  readonly #tools = new Map<string, CallStats>();
  #lastCallId = 0;

  /** `names`: the agent's native tools, reported from the start (with zero calls). */
  constructor(names: Iterable<string>) {
    for (const name of names) this.#tools.set(name, new CallStats());
  }

  /** Each native tool's figures, by name. */
  health(): Record<string, NativeToolHealth> {
    const out: Record<string, NativeToolHealth> = {};
    for (const [name, stats] of this.#tools) out[name] = stats.health();
    return out;
  }

  /** The next call's id. */
  nextCallId(): number {
    this.#lastCallId += 1;
    return this.#lastCallId;
  }

  /** The counters of the tool `name` (made on first use for a tool the constructor was not given). */
  statsOf(name: string): CallStats {
    let stats = this.#tools.get(name);
    if (stats === undefined) {
      stats = new CallStats();
      this.#tools.set(name, stats);
    }
    return stats;
  }
}

/** What the two stages read of a native tool call, and the fields they fill in. */
export interface ObservedCall extends Invocation {
  readonly calls: NativeCalls;
  /** The native tool's name. */
  readonly name: string;
  /** The agent, and the model's id for the call (`direct` for `callTool`). */
  readonly context: { readonly agent: string; readonly callId: string };
  /** Set by {@link denialStage}. */
  callId: number;
  /** When the call began, set by {@link denialStage}, for the duration of a refusal. */
  startedAt: number;
}

function refOf(ctx: ObservedCall): NativeToolCallRef {
  return { callId: ctx.callId, name: ctx.name, toolCallId: ctx.context.callId, agent: ctx.context.agent };
}

function codeOf(err: unknown): string {
  return isInterlockError(err) ? err.code : 'UNKNOWN';
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * Before authorize: numbers the call, and counts and reports (`tool_call_denied`) a call the gate refuses. The
 * authorize stage sets the decision only when the gate allows, so an error with no decision set is the refusal.
 */
export async function denialStage<C extends ObservedCall>(
  ctx: C,
  next: Terminal<C, ToolCallResult>,
): Promise<ToolCallResult> {
  ctx.callId = ctx.calls.nextCallId();
  ctx.startedAt = performance.now();
  try {
    return await next(ctx);
  } catch (err) {
    if (ctx.decision === undefined) {
      const durationMs = performance.now() - ctx.startedAt;
      ctx.calls.statsOf(ctx.name).refused();
      ctx.calls.events.emit('tool_call_denied', () => {
        const classified = classifyCallError(err);
        return {
          ...refOf(ctx),
          durationMs,
          code: codeOf(err),
          reason: classified.reason ?? asError(err).message,
          ruleId: classified.ruleId,
          error: asError(err),
        };
      });
    }
    throw err;
  }
}

/**
 * After authorize: the call counts as in flight while it runs, then as a call (an error when it threw or returned
 * an error result) with its duration, and is reported by `tool_call_started` and how it ended.
 */
export async function recordStage<C extends ObservedCall>(
  ctx: C,
  next: Terminal<C, ToolCallResult>,
): Promise<ToolCallResult> {
  const { calls } = ctx;
  const stats = calls.statsOf(ctx.name);
  const started = performance.now();
  stats.started();
  calls.events.emit('tool_call_started', () => refOf(ctx));
  try {
    const result = await next(ctx);
    const durationMs = performance.now() - started;
    stats.record(durationMs, !result.isError);
    calls.events.emit('tool_call_completed', () => ({
      ...refOf(ctx),
      durationMs,
      isError: result.isError,
      resultChars: result.text.length,
    }));
    return result;
  } catch (err) {
    const durationMs = performance.now() - started;
    stats.record(durationMs, false);
    calls.events.emit('tool_call_failed', () => ({
      ...refOf(ctx),
      durationMs,
      code: codeOf(err),
      error: asError(err),
    }));
    throw err;
  } finally {
    stats.settled();
  }
}
