// A first call from your own project: the notes server that ships with the package, over stdio. The call is
// denied until the capability set grants it. Compile and run: npx tsc && node first-call.js
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { PermissionDeniedError } from 'mcp-interlock';
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

const packageDir = dirname(createRequire(import.meta.url).resolve('mcp-interlock/package.json'));
const notesServer = join(packageDir, 'examples/servers/notes-server.mjs');

const capabilities = new CapabilitySet(); // grants nothing yet: every call is denied
await using manager = new MCPClientManager({ capabilities });
await manager.connectServer({
  name: 'notes',
  transport: 'stdio',
  command: process.execPath,
  args: [notesServer],
});

try {
  await manager.executeTool('mcp__notes__read_note', { id: 'drafts/welcome' });
} catch (error) {
  if (!(error instanceof PermissionDeniedError)) throw error;
  console.log(`denied: ${error.code} ${error.resource} ${error.action}`);
}

capabilities.grant('mcp:notes:read_note', 'execute'); // the first policy: this one tool
console.log(await manager.executeTool('mcp__notes__read_note', { id: 'drafts/welcome' }));
