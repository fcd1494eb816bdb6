/**
 * Span names and attributes (issue 4, "Telemetry"), through `@opentelemetry/api` only. Names follow the
 * OpenTelemetry GenAI semantic conventions where they exist (`invoke_agent`, `chat`, `execute_tool`,
 * `gen_ai.*`); what they do not cover is under `interlock.*`. Argument values and message contents never go
 * into spans.
 */

/** The tracer name used when none is given. */
export const TRACER_NAME = 'interlock';

/** Attribute keys. */
export const ATTR = {
  OPERATION: 'gen_ai.operation.name',
  PROVIDER: 'gen_ai.provider.name',
  REQUEST_MODEL: 'gen_ai.request.model',
  RESPONSE_MODEL: 'gen_ai.response.model',
  RESPONSE_ID: 'gen_ai.response.id',
  FINISH_REASONS: 'gen_ai.response.finish_reasons',
  INPUT_TOKENS: 'gen_ai.usage.input_tokens',
  OUTPUT_TOKENS: 'gen_ai.usage.output_tokens',
  AGENT_NAME: 'gen_ai.agent.name',
  TOOL_NAME: 'gen_ai.tool.name',
  TOOL_CALL_ID: 'gen_ai.tool.call.id',
  TOOL_TYPE: 'gen_ai.tool.type',
  ERROR_TYPE: 'error.type',
  SERVER: 'interlock.server',
  TOOL: 'interlock.tool',
  DECISION: 'interlock.decision',
  RULE_ID: 'interlock.rule_id',
  RESULT_CHARS: 'interlock.result.chars',
  TOOL_IS_ERROR: 'interlock.tool.is_error',
  TURN: 'interlock.turn',
  MAX_TURNS: 'interlock.max_turns',
  RUN_STATUS: 'interlock.run.status',
  RUN_TURNS: 'interlock.run.turns',
  RUN_TOOL_CALLS: 'interlock.run.tool_calls',
  PARENT_AGENT: 'interlock.agent.parent',
} as const;

/** Span names: `invoke_agent {agent}`, `interlock.turn`, `chat {model}`, `execute_tool {tool}`, `create_agent {agent}`. */
export const SPAN = {
  run: (agent: string) => `invoke_agent ${agent}`,
  turn: 'interlock.turn',
  chat: (model: string) => `chat ${model}`,
  tool: (tool: string) => `execute_tool ${tool}`,
  create: (agent: string) => `create_agent ${agent}`,
} as const;
