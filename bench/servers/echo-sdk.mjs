#!/usr/bin/env node
// The bench's echo tool on the SDK's `McpServer` (issue 8, "Harness"): the same tool as echo-raw.mjs, served
// the way most real servers are written, over stdio or Streamable HTTP.
//
//   node echo-sdk.mjs [--transport stdio|http] [--port N] [--delay-ms N] [--pid-dir DIR]
//
// http: Streamable HTTP at http://127.0.0.1:<port>/mcp, stateful (one transport and server per session),
// answering POSTs with JSON (enableJsonResponse), and prints exactly `LISTENING <port>` on stdout once it accepts connections; it exits when stdin ends.
// --delay-ms and --pid-dir work as in echo-raw.mjs.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const { values } = parseArgs({
  options: {
    transport: { type: 'string', default: 'stdio' },
    port: { type: 'string', default: '0' },
    'delay-ms': { type: 'string', default: '0' },
    'pid-dir': { type: 'string' },
  },
});
if (values['pid-dir'] !== undefined) {
  try {
    writeFileSync(join(values['pid-dir'], String(process.pid)), '');
  } catch {
    process.exit(1); // the benchmark that asked for it is gone: so is the reason to run
  }
}
const delayMs = Number(values['delay-ms']);
if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));

function createEchoServer() {
  const server = new McpServer({ name: 'bench-echo-sdk', version: '1.0.0' });
  server.registerTool(
    'echo',
    {
      description: 'Returns its text argument.',
      inputSchema: { text: z.string().describe('The text to return.') },
    },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}

if (values.transport === 'stdio') {
  await createEchoServer().connect(new StdioServerTransport());
} else if (values.transport === 'http') {
  const sessions = new Map();
  const readBody = async (req) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  };
  const http = createServer(async (req, res) => {
    try {
      if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') {
        res.writeHead(404).end();
        return;
      }
      const sid = req.headers['mcp-session-id'];
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      if (typeof sid === 'string') {
        const transport = sessions.get(sid);
        if (transport === undefined) {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              error: { code: -32001, message: 'Session not found' },
              id: null,
            }),
          );
          return;
        }
        await transport.handleRequest(req, res, body);
        return;
      }
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'No session' }, id: null }));
        return;
      }
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        // Plain JSON answers rather than a one-event SSE stream per POST: less server work per call.
        enableJsonResponse: true,
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      };
      await createEchoServer().connect(transport);
      await transport.handleRequest(req, res, body);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    }
  });
  http.keepAliveTimeout = 30_000;
  http.listen(Number(values.port), '127.0.0.1', () => {
    process.stdout.write(`LISTENING ${http.address().port}\n`);
  });
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
} else {
  process.stderr.write('usage: node echo-sdk.mjs [--transport stdio|http] [--port N]\n');
  process.exit(2);
}
