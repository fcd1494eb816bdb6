/**
 * The statistics and events of an agent's native tool calls (issue 15): their counters, and the recorder the one
 * invocation pipeline (src/interop/pipeline.ts) counts and reports them with, as it does MCP tool calls.
 */
import { isInterlockError } from '../errors.js';
import { TypedEvents } from '../interop/events.js';
import type { Authorized, Invocation, Recorder } from '../interop/pipeline.js';
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

/** What a native tool call's recorder reads. */
export interface ObservedCall extends Invocation {
  readonly calls: NativeCalls;
  /** The native tool's name. */
  readonly name: string;
  /** The agent, and the model's id for the call (`direct` for `callTool`). */
  readonly context: { readonly agent: string; readonly callId: string };
  /** Numbered as the call enters the pipeline. */
  callId: number;
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
 * How native tool calls are counted and reported (the invocation pipeline's refusal and send stages), the way MCP
 * tool calls are: a refusal as `tool_call_denied`; a call as in flight while it runs, then as a call (an error when it
 * threw or returned an error result) with its duration, reported by `tool_call_started` and how it ended. What
 * `invoke` throws reaches the caller as it is.
 */
export function nativeRecorder<C extends ObservedCall>(): Recorder<
  C,
  C & Authorized,
  C & Authorized,
  ToolCallResult
> {
  return {
    stats: (ctx) => ctx.calls.statsOf(ctx.name),
    begin(ctx) {
      ctx.callId = ctx.calls.nextCallId();
    },
    denied(ctx, err, durationMs) {
      ctx.calls.events.emit('tool_call_denied', () => {
        const classified = classifyCallError(err);
        return {
          ...refOf(ctx),
          durationMs,
          code: err.code,
          reason: classified.reason ?? err.message,
          ruleId: classified.ruleId,
          error: err,
        };
      });
    },
    started(ctx) {
      ctx.calls.events.emit('tool_call_started', () => refOf(ctx));
      return ctx.callId;
    },
    ok: (result) => !result.isError,
    completed(ctx, _callId, durationMs, result) {
      ctx.calls.events.emit('tool_call_completed', () => ({
        ...refOf(ctx),
        durationMs,
        isError: result.isError,
        resultChars: result.text.length,
      }));
    },
    failed(ctx, _callId, durationMs, error) {
      ctx.calls.events.emit('tool_call_failed', () => ({
        ...refOf(ctx),
        durationMs,
        code: codeOf(error),
        error: asError(error),
      }));
    },
  };
}
