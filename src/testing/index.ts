/**
 * The `mcp-interlock/testing` entry: what a test suite needs to exercise an agent's tool plan offline, with no
 * server and no network. Register a server's tool schemas with `agent.registerTools(server, schemas)`, give
 * the agent a scripted model, run it, and assert on `result.steps` (which tool, what the gate decided, and
 * what the model was told). Any name added here becomes public API.
 */
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
} from '../providers/scripted.js';
export { MemoryAuditSink } from '../security/audit.js';
