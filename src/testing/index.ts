/**
 * The `mcp-interlock/testing` entry: what a test suite needs to exercise an agent's tool plan offline, with no
 * server and no network. Register a server's tool schemas with `agent.registerTools(server, schemas)`, give
 * the agent a scripted model, run it, and assert on `result.steps` (which tool, what the gate decided, and
 * what the model was told). Record decisions with `MemoryAuditSink` from `mcp-interlock/security`. Any name added
 * here becomes public API.
 */
export {
  type RecordedRequest,
  ScriptedProvider,
  type ScriptedProviderOptions,
  type ScriptedToolCall,
  type ScriptedTurn,
  type ScriptStep,
  scriptedModel,
  useTool,
  useTools,
} from '../providers/scripted.js';
