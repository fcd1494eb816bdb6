// A local server as a child process, speaking MCP over its stdin and stdout.
import { createRequire } from 'node:module';
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

const everything = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

export async function main() {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:everything:get-sum', 'execute');

  await using manager = new MCPClientManager({ capabilities });
  const connection = await manager.connectServer({
    name: 'everything',
    transport: 'stdio',
    command: process.execPath, // no shell is involved: give the program and its arguments
    args: [everything, 'stdio'],
    env: { LOG_LEVEL: 'warn' }, // added to a minimal environment (PATH, HOME, ...), not to all of ours
    timeoutMs: 30_000, // per request; the default is 60 s
  });

  const sum = await manager.executeTool('mcp__everything__get-sum', { a: 2, b: 3 });
  return {
    state: connection.state, // 'ready'
    pid: connection.pid,
    tools: manager.tools.map((tool) => tool.name), // ['mcp__everything__echo', ...]
    sum, // 'The sum of 2 and 3 is 5.'
  };
}
