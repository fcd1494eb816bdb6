/**
 * An agent's typed events and call statistics for its native tools (issue 15: native tools get the stats and events
 * MCP tools have). The payloads and figures are the manager's shapes (`ToolCallCompletion`, `ToolCallFailure`,
 * `CallHealth` in src/interop), so one listener or dashboard reads both; like the manager's, they name tools,
 * durations and error codes, never argument values.
 */
import type { ToolCallCompletion, ToolCallDenial, ToolCallFailure } from '../interop/events.js';
import type { CallHealth } from '../interop/stats.js';

/** The native tool call an agent event is about. */
export interface NativeToolCallRef {
  /** Numbers the agent's native calls from 1: pairs a `tool_call_started` with the event that ends the call. */
  callId: number;
  /** The tool's name (what the model calls it). */
  name: string;
  /** The model's id for the call (the run step's `callId`), or `direct` for `agent.callTool`. */
  toolCallId: string;
  /** The agent that made the call. */
  agent: string;
}

/**
 * An agent's events, name to payload. Each native tool call ends in exactly one of `tool_call_completed`,
 * `tool_call_failed` or `tool_call_denied`; `tool_call_started` comes first for a call the gate allowed, as on the
 * manager, where the MCP tools' events are (`agent.mcp.on(...)`).
 */
export interface AgentSessionEvents {
  /** The gate allowed a native tool call and it is about to run. */
  tool_call_started: NativeToolCallRef;
  /** It returned a result; `isError` for an error result (the tool threw: the model is told why). */
  tool_call_completed: NativeToolCallRef & ToolCallCompletion;
  /** It threw: bad arguments (`INVALID_TOOL_INPUT`) or cancelled (`REQUEST_CANCELLED`). */
  tool_call_failed: NativeToolCallRef & ToolCallFailure;
  /** The gate refused it (`CAPABILITY_DENIED`, `AUDIT_FAILED`): nothing ran. */
  tool_call_denied: NativeToolCallRef & ToolCallDenial;
}

export type AgentSessionEventName = keyof AgentSessionEvents;

/**
 * One native tool's figures, from `agent.nativeToolHealth()`: the {@link CallHealth} the manager reports per server,
 * `denied` included (calls the gate refused are not in `calls`: they never ran).
 */
export type NativeToolHealth = CallHealth;
