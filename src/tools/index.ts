// Public API of the tools area. Any name added here becomes public API.

export type { ArgumentLimits } from './limits.js';
export { makeToolName, parseToolName } from './names.js';
export { mcpResultToString, type ToolCallResult } from './normalize.js';
export { parseToolSchemas } from './schema.js';
export {
  type ToolAnnotations,
  type ToolCallOptions,
  type ToolDefinition,
  ToolWrapper,
} from './tool-wrapper.js';
