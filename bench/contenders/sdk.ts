/**
 * Contender `sdk`: the raw MCP TypeScript SDK 1.x `Client.callTool`, the baseline every ratio is taken against
 * (see bench/lib/raw-client.ts for how it connects and reconnects).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { rawClientContender } from '../lib/raw-client.js';
import { runContender } from '../lib/worker.js';

await runContender(
  rawClientContender('sdk', async (spec) => {
    const client = new Client({ name: 'bench-sdk', version: '1.0.0' });
    await client.connect(
      spec.transport === 'stdio'
        ? new StdioClientTransport({ command: spec.command, args: spec.args })
        : new StreamableHTTPClientTransport(new URL(spec.url)),
    );
    await client.listTools();
    return client;
  }),
);
