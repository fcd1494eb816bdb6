// Public API of the providers area (model providers). Any name added here becomes public API. The scripted
// model, a test helper, is exported by `mcp-interlock/testing` (each public name by one entry point, issue 43).
export { AnthropicProvider, type AnthropicProviderOptions } from './anthropic.js';
export { ModelProviderError } from './errors.js';
export { OpenAIChatProvider, type OpenAIChatProviderOptions } from './openai.js';
export type {
  AssistantMessage,
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
