// Public API of the session area. Any name added here becomes public API.
export {
  AGENT_NAME_RE,
  AgentSession,
  type AgentSessionOptions,
  type SpawnOptions,
} from './agent-session.js';
export type {
  AgentSessionEventName,
  AgentSessionEvents,
  NativeToolCallRef,
  NativeToolHealth,
} from './events.js';
export { GatedToolView, type GatedToolViewOptions, type McpToolAccess } from './gated-view.js';
export { DEFAULT_MAX_PARALLEL_TOOL_CALLS, DEFAULT_MAX_TURNS } from './loop.js';
export {
  type SessionConstructor,
  type SessionInterop,
  SessionInteropMixin,
  type SessionInteropOptions,
} from './mixin.js';
export {
  type DefineToolOptions,
  defineTool,
  NATIVE_TOOL_NAME_RE,
  type NativeTool,
  type NativeToolContext,
} from './native-tool.js';
export { Session, type SessionState } from './session.js';
export { ATTR as SPAN_ATTRIBUTES, SPAN as SPAN_NAMES, TRACER_NAME } from './telemetry.js';
export type {
  AgentCallOptions,
  RunInput,
  RunOptions,
  RunResult,
  RunStatus,
  RunStep,
  StepDecision,
  ToolDescriptor,
} from './types.js';
