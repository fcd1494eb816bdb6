// Connect an MCP server, grant one tool, call it. Run: node --import tsx examples/quickstart.ts
// In your own project (an ES module: `npm pkg set type=module`) it runs once what it uses is installed:
//   npm install mcp-interlock @modelcontextprotocol/server-everything tsx
import { createRequire } from 'node:module';
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

// The MCP project's reference server, installed from npm.
const everything = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

const capabilities = new CapabilitySet();
capabilities.grant('mcp:everything:echo', 'execute'); // this one tool; everything else is denied

await using manager = new MCPClientManager({ capabilities });
await manager.connectServer({
  name: 'everything',
  transport: 'stdio',
  command: process.execPath,
  args: [everything, 'stdio'],
});

console.log(await manager.executeTool('mcp__everything__echo', { message: 'hello' })); // Echo: hello
