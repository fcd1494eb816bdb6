// Public API of the engine area. Any name added here becomes public API. The container and its tokens are not.

// The names an app needs beside the engine, from the areas that own them.
export {
  type AgentSessionEventName,
  type AgentSessionEvents,
  type AgentSessionOptions,
  defineTool,
  type NativeTool,
  type NativeToolCallRef,
  type NativeToolHealth,
  type RunInput,
  type RunOptions,
  type RunResult,
  type RunStep,
  type SpawnOptions,
  type StepDecision,
  type ToolDescriptor,
} from '../session/index.js';
export { Agent } from './agent.js';
export { Engine } from './engine.js';
export type {
  AgentOptions,
  AuditSettings,
  CapabilityResolver,
  CapabilitySpec,
  EngineManagerOptions,
  EngineOptions,
  EngineStateOptions,
  ManagerFactory,
  ModelResolver,
} from './types.js';
