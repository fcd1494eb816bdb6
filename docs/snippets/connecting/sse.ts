// A server that only speaks the older HTTP+SSE transport (MCP 2024-11-05). Try it with:
//   npx @modelcontextprotocol/server-everything sse   (serves http://localhost:3001/sse)
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

export async function main(url = 'http://localhost:3001/sse') {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:legacy:echo', 'execute');

  await using manager = new MCPClientManager({ capabilities });
  const connection = await manager.connectServer({ name: 'legacy', transport: 'sse', url });

  const reply = await manager.executeTool('mcp__legacy__echo', { message: 'over SSE' });
  return { transport: connection.transport, reply }; // { transport: 'sse', reply: 'Echo: over SSE' }
}
