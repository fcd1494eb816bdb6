/**
 * An MCP server that serves one AgentDojo suite from its data (bench/agentdojo/README.md, "The server"). One process
 * serves many cases: a case is made with `POST /cases` (`{ injections: { vector: text } }` → `{ id }`), and the MCP
 * session whose `initialize` carries the header `x-agentdojo-case: <id>` works on that case's own copy of the
 * environment, so cases never see each other's changes. `GET /cases/<id>` answers the case's environment now and the
 * calls that ran (for the security checks); `DELETE /cases/<id>` forgets it.
 *
 *   node --import tsx bench/agentdojo/server.ts <suite dir>
 *
 * Streamable HTTP at /mcp on 127.0.0.1, a free port; prints `LISTENING <port>` once bound. Exits when stdin ends.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  isInitializeRequest,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { stringify } from 'yaml';
import { type Json, runSteps } from './ops.js';
import { fillVectors, loadSuite, type Suite } from './suite.js';

/** A case: its environment (changed by the calls) and the calls that ran, in order. */
interface Case {
  readonly environment: Json;
  readonly calls: { tool: string; args: Record<string, Json> }[];
}

/** Python's YAML-like rendering of a tool result, as the benchmark shows results to the model. */
function render(value: Json): string {
  if (typeof value === 'string') return value;
  return stringify(value, { lineWidth: 0 }).trimEnd();
}

function mcpServer(suite: Suite, kase: Case): Server {
  const server = new Server(
    { name: `agentdojo-${suite.name}`, version: '1.0.0' },
    { capabilities: { tools: {} } },
  );
  const tools = new Map(suite.tools.map((t) => [t.name, t]));
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: suite.tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema as { type: 'object' },
      annotations: t.annotations,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const tool = tools.get(request.params.name);
    if (tool === undefined) {
      return { content: [{ type: 'text', text: `Unknown tool ${request.params.name}` }], isError: true };
    }
    const args = (request.params.arguments ?? {}) as Record<string, Json>;
    const outcome = runSteps(tool.steps, {
      root: kase.environment,
      args,
      vars: {},
      now: suite.now,
    });
    if ('error' in outcome) return { content: [{ type: 'text', text: outcome.error }], isError: true };
    kase.calls.push({ tool: tool.name, args: structuredClone(args) });
    return { content: [{ type: 'text', text: render(outcome.value) }] };
  });
  return server;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Serves `suite` on 127.0.0.1 (port 0: any free port); resolves with the port and a close function. */
export async function serveSuite(
  suite: Suite,
  port = 0,
): Promise<{ port: number; close: () => Promise<void> }> {
  const cases = new Map<string, Case>();
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  async function mcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sid = req.headers['mcp-session-id'];
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    if (typeof sid === 'string') {
      const transport = sessions.get(sid);
      if (transport === undefined)
        return send(res, 404, {
          jsonrpc: '2.0',
          error: { code: -32001, message: 'Session not found' },
          id: null,
        });
      return transport.handleRequest(req, res, body);
    }
    const kase = cases.get(String(req.headers['x-agentdojo-case'] ?? ''));
    if (!isInitializeRequest(body) || kase === undefined) {
      return send(res, 400, {
        jsonrpc: '2.0',
        error: { code: -32000, message: 'initialize with a known x-agentdojo-case header first' },
        id: null,
      });
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await mcpServer(suite, kase).connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/mcp') return mcp(req, res);
    if (url.pathname === '/cases' && req.method === 'POST') {
      const body = (await readBody(req)) as { injections?: Record<string, string> } | undefined;
      const id = randomUUID();
      cases.set(id, {
        environment: fillVectors(suite.environment, suite, body?.injections ?? {}),
        calls: [],
      });
      return send(res, 201, { id });
    }
    const m = /^\/cases\/([^/]+)$/.exec(url.pathname);
    const kase = m?.[1] === undefined ? undefined : cases.get(m[1]);
    if (m !== null && kase !== undefined && req.method === 'GET') return send(res, 200, kase);
    if (m !== null && kase !== undefined && req.method === 'DELETE') {
      cases.delete(m[1] as string);
      res.writeHead(204).end();
      return;
    }
    send(res, 404, { error: `not found: ${req.method} ${url.pathname}` });
  }

  const http = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, { error: String(err) });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, '127.0.0.1', resolve);
  });
  return {
    port: (http.address() as AddressInfo).port,
    close: async () => {
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

// Run as a program: serve the suite in argv[2] until stdin ends.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2];
  if (dir === undefined) {
    process.stderr.write('usage: server.ts <suite dir>\n');
    process.exit(2);
  }
  const served = await serveSuite(loadSuite(dir));
  process.stdout.write(`LISTENING ${served.port}\n`);
  process.stdin.once('end', () => void served.close().then(() => process.exit(0)));
  process.stdin.resume();
}
