// The manager every framework sample shares: server-everything over stdio, behind a policy that lets the model
// echo anything but secrets. Each framework gets its tools from this one manager, so this policy decides.
import { createRequire } from 'node:module';
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

const everything = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

export async function connectEverything(): Promise<MCPClientManager> {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:everything:echo', 'execute');
  capabilities.grant('mcp:everything:get-tiny-image', 'execute');
  capabilities.deny('mcp:everything:echo', 'execute', {
    description: 'Secrets stay on this machine.',
    when: { args: { message: { startsWith: 'secret' } } },
  });
  const manager = new MCPClientManager({ capabilities });
  await manager.connectServer({
    name: 'everything',
    transport: 'stdio',
    command: process.execPath,
    args: [everything, 'stdio'],
  });
  return manager;
}
