// Default deny: a tool nobody granted is listed, but calling it fails before anything reaches the server.
import { createRequire } from 'node:module';
import { PermissionDeniedError } from 'mcp-interlock';
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

const everything = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

export async function main() {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:everything:echo', 'execute'); // echo only

  await using manager = new MCPClientManager({ capabilities });
  await manager.connectServer({
    name: 'everything',
    transport: 'stdio',
    command: process.execPath,
    args: [everything, 'stdio'],
  });

  const listed = manager.getTool('mcp__everything__get-sum') !== undefined;
  try {
    await manager.executeTool('mcp__everything__get-sum', { a: 2, b: 3 });
    return { listed, denied: false };
  } catch (error) {
    if (!(error instanceof PermissionDeniedError)) throw error;
    // error.code === 'CAPABILITY_DENIED'; resource and action say exactly what to grant.
    return { listed, denied: true, code: error.code, resource: error.resource, action: error.action };
  }
}
