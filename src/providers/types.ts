/**
 * The contract between the agent loop and a model (issue 4, "Model providers"): messages and tool
 * definitions in, text and tool calls out, with a `signal`. Providers depend on nothing of ours but the
 * shared errors; the agent loop depends only on this file.
 */
import type { Dispatcher } from 'undici';
import type { MediaContent } from '../tools/media.js';

/** A tool as a model is shown it. A `ToolWrapper` fits this shape as is. */
export interface ModelToolDefinition {
  /** The model-facing name: `mcp__{server}__{tool}` for MCP tools, the tool's own name for native ones. */
  readonly name: string;
  readonly description: string;
  /** The tool's JSON Schema for its arguments, as the server (or `defineTool`) gave it. */
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/** One tool call the model proposed. */
export interface ModelToolCall {
  /** The provider's id of the call (`call_...`, `toolu_...`); tool results refer to it. */
  readonly id: string;
  /** The model-facing tool name. */
  readonly name: string;
  /** The arguments; `{}` when the model sent none or sent something that is not a JSON object. */
  readonly arguments: Readonly<Record<string, unknown>>;
  /**
   * The arguments exactly as the model wrote them, when the API sends them as text (OpenAI). Echoed back
   * unchanged in later requests.
   */
  readonly rawArguments?: string | undefined;
  /** Set when the model's arguments were not a JSON object: why. The loop tells the model, never calls. */
  readonly argumentsError?: string | undefined;
}

/** The user's input. */
export interface UserMessage {
  readonly role: 'user';
  readonly content: string;
}

/** What the model answered: text, tool calls, or both. */
export interface AssistantMessage {
  readonly role: 'assistant';
  readonly content: string;
  readonly toolCalls?: readonly ModelToolCall[] | undefined;
}

/** The result of one tool call, as the string the model reads. */
export interface ToolResultMessage {
  readonly role: 'tool';
  readonly toolCallId: string;
  readonly toolName: string;
  readonly content: string;
  /** True when the call failed or was denied; the text says why. */
  readonly isError?: boolean | undefined;
  /**
   * The result's images and audio, for a model that can see or hear them: set only when the agent asks for
   * them (`toolResults: 'content'`). `content` still holds the whole result as text, with a placeholder for
   * each. Providers send what their API takes in a tool result and leave the rest to the placeholders.
   */
  readonly media?: readonly MediaContent[] | undefined;
}

/** One message of a conversation. Instructions (the system prompt) travel apart, in the request. */
export type ModelMessage = UserMessage | AssistantMessage | ToolResultMessage;

/** What a provider is asked. */
export interface ModelRequest {
  /** The system prompt. */
  readonly instructions?: string | undefined;
  readonly messages: readonly ModelMessage[];
  /** The tools the model may call this turn; may be empty. */
  readonly tools: readonly ModelToolDefinition[];
  readonly signal?: AbortSignal | undefined;
}

/** Why the model stopped. */
export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

/** Token counts, when the API reports them. */
export interface ModelUsage {
  readonly inputTokens?: number | undefined;
  readonly outputTokens?: number | undefined;
}

/** What a provider answers. */
export interface ModelResponse {
  /** The text part; `''` when the model only called tools. */
  readonly text: string;
  /** The tool calls, in the order the model made them; empty for a final answer. */
  readonly toolCalls: readonly ModelToolCall[];
  readonly finishReason: FinishReason;
  readonly usage?: ModelUsage | undefined;
  /** The API's id for the response, for telemetry. */
  readonly responseId?: string | undefined;
  /** The model that actually answered, when the API says. */
  readonly model?: string | undefined;
}

/** A model behind an API (or a script). */
export interface ModelProvider {
  /** The provider's name for telemetry (`gen_ai.provider.name`): `openai`, `anthropic`, `scripted`, ... */
  readonly name: string;
  /** The model asked for (`gen_ai.request.model`). */
  readonly model: string;
  /**
   * Asks the model for its next turn. Rejects with `REQUEST_CANCELLED` when `signal` aborts, and with a
   * coded error when the API fails; never resolves with a half-read answer.
   */
  generate(request: ModelRequest): Promise<ModelResponse>;
  /**
   * This provider sending its requests through `dispatcher` (an engine's guarded, shared one). Providers that
   * were given their own `dispatcher` or `fetch` return themselves. Optional: providers without HTTP omit it.
   */
  withDispatcher?(dispatcher: Dispatcher): ModelProvider;
}
