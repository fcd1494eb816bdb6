// Expose only some of a server's tools. Tools filtered out are never listed and cannot be called.
import { createRequire } from 'node:module';
import { MCPClientManager } from 'mcp-interlock/interop';

const everything = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

export async function main() {
  await using manager = new MCPClientManager();
  await manager.connectServer({
    name: 'everything',
    transport: 'stdio',
    command: process.execPath,
    args: [everything, 'stdio'],
    // Original tool names, exact or with `*`. Deny wins over allow; without `allow`, every tool passes.
    tools: { allow: ['echo', 'get-*'], deny: ['get-env'] },
  });
  return manager.tools.map((tool) => tool.tool); // ['echo', 'get-annotated-message', ..., 'get-sum', ...]
}
