/** The shapes of an agent's tools and runs. */
import type { ModelMessage, ModelUsage } from '../providers/types.js';
import type { ToolAnnotations } from '../tools/tool-wrapper.js';

/** One tool an agent has, MCP or native, as plain data. Call it with `agent.callTool(name, args)`. */
export interface ToolDescriptor {
  /** The model-facing name: `mcp__{server}__{tool}`, or a native tool's own name. */
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly annotations?: ToolAnnotations | undefined;
  readonly source: 'mcp' | 'native';
  /** MCP tools: the server. */
  readonly server?: string | undefined;
  /** MCP tools: the original tool name on the server. */
  readonly tool?: string | undefined;
  /** What capability rules name: `mcp:{server}:{tool}` or `tool:{name}`. */
  readonly resource: string;
  /** MCP tools registered offline (`registerTools`) and not backed by a live server. */
  readonly offline: boolean;
}

/** What the gate did with a proposed call. */
export type StepDecision =
  /** The gate allowed the call; it ran (and may still have failed). */
  | 'allow'
  /** The gate denied it (a rule, default deny, an unapproved ask, a failed audit, a changed tool definition). */
  | 'deny'
  /** It never reached the gate: unknown tool, arguments that are not a JSON object, or `maxTurns` reached. */
  | 'skipped';

/** One tool call of a run. Argument values are here for the caller; they never go to telemetry. */
export interface RunStep {
  /** The model turn (1-based) that proposed it. */
  readonly turn: number;
  /** The model's id for the call. */
  readonly callId: string;
  /** The model-facing tool name. */
  readonly tool: string;
  readonly source: 'mcp' | 'native' | 'unknown';
  /** MCP tools: the server. */
  readonly server?: string | undefined;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly decision: StepDecision;
  /** Why it was denied or skipped. */
  readonly reason?: string | undefined;
  /** The rule that decided a denial, when one did. */
  readonly ruleId?: string | undefined;
  readonly durationMs: number;
  /** True when the model was sent an error (denied, failed, or the tool reported an error). */
  readonly isError: boolean;
  /** The error code when the call threw (`CAPABILITY_DENIED`, `INVALID_TOOL_INPUT`, `REQUEST_TIMEOUT`, ...). */
  readonly code?: string | undefined;
  /** The string the model was sent. */
  readonly output: string;
}

/** How a run ended. */
export type RunStatus = 'completed' | 'max_turns';

/** The result of `agent.run()`. */
export interface RunResult {
  /** The model's final answer; its last text when the run hit `maxTurns`. */
  readonly output: string;
  readonly status: RunStatus;
  /** Model turns taken. */
  readonly turns: number;
  /** Every proposed tool call, in the order the model proposed them. */
  readonly steps: readonly RunStep[];
  /** The whole conversation, ending with the model's last message; pass it (plus a new user message) to continue. */
  readonly messages: readonly ModelMessage[];
  /** Tokens summed over the turns, when the provider reports them. */
  readonly usage: Required<ModelUsage>;
}

/** The input of a run: a user message, or a conversation to continue. */
export type RunInput = string | readonly ModelMessage[];

/** Options of `agent.run()`. */
export interface RunOptions {
  /** Cancels the run: the model request and tool calls under way are cancelled, and the run rejects. */
  signal?: AbortSignal | undefined;
}

/** Options of `agent.callTool()`. */
export interface AgentCallOptions {
  signal?: AbortSignal | undefined;
  /** Per-call timeout for MCP tools; defaults to the server's `timeoutMs`. */
  timeoutMs?: number | undefined;
}
