// Public API of the providers area (model providers). Any name added here becomes public API.
export {
  ANTHROPIC_BASE_URL,
  ANTHROPIC_VERSION,
  type AnthropicMessage,
  AnthropicProvider,
  type AnthropicProviderOptions,
  DEFAULT_ANTHROPIC_MAX_TOKENS,
  toAnthropicMessages,
} from './anthropic.js';
export { MODEL_REQUEST_FAILED, ModelProviderError, type ModelProviderErrorDetails } from './errors.js';
export {
  closeSharedModelDispatcher,
  DEFAULT_MODEL_MAX_RETRIES,
  DEFAULT_MODEL_TIMEOUT_MS,
  type HttpProviderOptions,
  MAX_RETRY_DELAY_MS,
  type ModelFetch,
  sharedModelDispatcher,
} from './http.js';
export {
  OPENAI_BASE_URL,
  OpenAIChatProvider,
  type OpenAIChatProviderOptions,
  toOpenAIMessages,
} from './openai.js';
export { type ConvertedToolSchema, PROVIDER_TOOL_NAME_RE, toProviderSchema } from './schema.js';
export {
  type RecordedRequest,
  type ScriptContext,
  ScriptedProvider,
  type ScriptedProviderOptions,
  type ScriptedToolCall,
  type ScriptedTurn,
  type ScriptFunction,
  type ScriptStep,
  scriptedModel,
  useTool,
  useTools,
} from './scripted.js';
export type {
  AssistantMessage,
  FinishReason,
  ModelMessage,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ModelToolCall,
  ModelToolDefinition,
  ModelUsage,
  ToolResultMessage,
  UserMessage,
} from './types.js';
