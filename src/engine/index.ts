// Public API of the engine area: the engine, its agents, and the names an agent's user meets, which the session
// area defines (each public name is exported by exactly one entry point, issue 43). Any name added here becomes
// public API. The container and its tokens are not.

export type { SpawnOptions } from '../session/agent-session.js';
export type { AgentSessionEvents } from '../session/events.js';
export {
  type DefineToolOptions,
  defineTool,
  type NativeTool,
  type NativeToolContext,
} from '../session/native-tool.js';
export type { RunOptions, RunResult, RunStatus, RunStep, ToolDescriptor } from '../session/types.js';
export { Agent } from './agent.js';
export { Engine } from './engine.js';
export type { AgentOptions, CapabilitySpec, EngineOptions } from './types.js';
