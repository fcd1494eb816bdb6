// One broken server does not stop the others: connectAll reports each server's outcome.
import { createRequire } from 'node:module';
import { isInterlockError } from 'mcp-interlock';
import { MCPClientManager } from 'mcp-interlock/interop';

const everything = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

export async function main() {
  await using manager = new MCPClientManager();
  const connected = await manager.connectAll([
    { name: 'everything', transport: 'stdio', command: process.execPath, args: [everything, 'stdio'] },
    { name: 'broken', transport: 'stdio', command: 'no-such-mcp-server', connectTimeoutMs: 5_000 },
  ]);

  const broken = manager.getConnection('broken');
  return {
    connected, // { everything: true, broken: false }
    state: broken?.state, // 'failed'
    code: isInterlockError(broken?.error) ? broken.error.code : undefined, // 'CONNECTION_FAILED'
    tools: manager.tools.length, // the working server's tools are all there
  };
}
