// A remote server over Streamable HTTP. Try it with the reference server:
//   npx @modelcontextprotocol/server-everything streamableHttp   (serves http://localhost:3001/mcp)
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

export async function main(url = 'http://localhost:3001/mcp') {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:remote:echo', 'execute');

  await using manager = new MCPClientManager({ capabilities });
  const connection = await manager.connectServer({
    name: 'remote',
    transport: 'http',
    url,
    // Sent with every request and never logged.
    headers: { Authorization: `Bearer ${process.env.REMOTE_MCP_TOKEN ?? 'dev-token'}` },
  });

  const reply = await manager.executeTool('mcp__remote__echo', { message: 'over Streamable HTTP' });
  return { transport: connection.transport, reply }; // { transport: 'http', reply: 'Echo: over ...' }
}
