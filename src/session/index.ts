// Public API of the session area: sessions you build yourself. The names an agent's user meets (`defineTool`,
// `RunResult`, the agent's events) are exported by `mcp-interlock/engine`, each public name by exactly one entry
// point (issue 43). Any name added here becomes public API.
export { AgentSession, type AgentSessionOptions } from './agent-session.js';
export { GatedToolView, type GatedToolViewOptions } from './gated-view.js';
export { type SessionInterop, SessionInteropMixin, type SessionInteropOptions } from './mixin.js';
export { Session } from './session.js';
