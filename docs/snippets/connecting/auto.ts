// Not sure which HTTP transport a server speaks? `auto` tries Streamable HTTP first and falls back to
// HTTP+SSE when the server answers the initialize POST with a 4xx, as the MCP spec describes.
import { MCPClientManager } from 'mcp-interlock/interop';

export async function main(url: string) {
  await using manager = new MCPClientManager();
  const connection = await manager.connectServer({ name: 'unknown', transport: 'auto', url });
  return { transport: connection.transport }; // the one actually used: 'http' or 'sse'
}
