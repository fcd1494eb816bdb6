/**
 * Contender `sdk2`: the raw client of the SDK's v2 packages (`@modelcontextprotocol/client`), the one Interlock is
 * built on. The baseline stays the 1.x client (`sdk`); this column separates what the v2 client costs from what
 * Interlock adds on top of it (see bench/lib/raw-client.ts for how it connects and reconnects).
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { rawClientContender } from '../lib/raw-client.js';
import { runContender } from '../lib/worker.js';

await runContender(
  rawClientContender('sdk2', async (spec) => {
    const client = new Client({ name: 'bench-sdk2', version: '1.0.0' });
    await client.connect(
      spec.transport === 'stdio'
        ? new StdioClientTransport({ command: spec.command, args: spec.args })
        : new StreamableHTTPClientTransport(new URL(spec.url)),
    );
    await client.listTools();
    return client;
  }),
);
