// Add MCP to a session class of your own: servers connect when it starts and always disconnect when it closes.
import { fileURLToPath } from 'node:url';
import { CapabilitySet } from 'mcp-interlock/security';
import { SessionInteropMixin, type SessionInteropOptions } from 'mcp-interlock/session';

const notesServer = fileURLToPath(new URL('../../../examples/servers/notes-server.mjs', import.meta.url));

/** Your session class: its own options and lifecycle. */
class SupportSession {
  readonly transcript: string[] = [];
  constructor(readonly options: { customer: string; interop?: SessionInteropOptions }) {}
  async start(): Promise<void> {
    this.transcript.push(`hello ${this.options.customer}`);
  }
  async close(): Promise<void> {
    this.transcript.push('bye');
  }
}

// The mixed class reads `interop` from the first constructor argument and passes every argument on.
const McpSupportSession = SessionInteropMixin(SupportSession);

export async function main() {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:notes:list_notes', 'execute');
  const session = new McpSupportSession({
    customer: 'ada',
    interop: {
      mcpServers: [{ name: 'notes', transport: 'stdio', command: process.execPath, args: [notesServer] }],
      managerOptions: { capabilities },
    },
  });
  let notes = '';
  try {
    await session.start(); // connects, then runs SupportSession.start
    notes = await session.mcp.executeTool('mcp__notes__list_notes');
  } finally {
    await session.close(); // runs SupportSession.close, then disconnects, even if the work above threw
  }
  return { notes, transcript: session.transcript, connected: session.mcpConnected }; // connected: false
}
