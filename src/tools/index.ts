// Public API of the tools area. Any name added here becomes public API.

export {
  type ArgumentLimits,
  DEFAULT_MAX_ARGUMENT_BYTES,
  DEFAULT_MAX_ARGUMENT_DEPTH,
  DEFAULT_MAX_ARGUMENT_NODES,
} from './limits.js';
export { type MediaContent, resultMedia } from './media.js';
export {
  DEFAULT_MAX_TOOL_NAME_LENGTH,
  MAX_ORIGINAL_TOOL_NAME_LENGTH,
  MAX_TOOL_NAME_LENGTH_LIMIT,
  MIN_TOOL_NAME_LENGTH,
  makeToolName,
  parseToolName,
  type ToolNameOptions,
  type ToolRef,
} from './names.js';
export {
  DEFAULT_MAX_RESULT_CHARS,
  mcpResultToString,
  type ResultToStringOptions,
  type ToolCallResult,
  toToolCallResult,
} from './normalize.js';
export { parseToolSchemas, type ToolSchemaInput, ToolSchemaInputSchema } from './schema.js';
export {
  DEFAULT_MAX_SCHEMA_DEPTH,
  DEFAULT_MAX_SCHEMA_EXPANSION,
  DEFAULT_MAX_SCHEMA_NODES,
  type SchemaLimits,
} from './schema-bounds.js';
export {
  type ToolAnnotations,
  type ToolCallOptions,
  type ToolDefinition,
  type ToolIcon,
  type ToolInvoker,
  ToolWrapper,
} from './tool-wrapper.js';
export {
  type CompileInputValidatorOptions,
  compileInputValidator,
  type InputValidator,
} from './validate.js';
