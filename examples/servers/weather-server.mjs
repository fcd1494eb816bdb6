#!/usr/bin/env node
// Example Streamable HTTP MCP server bundled with Interlock: deterministic forecasts, no network.
// Run: node examples/servers/weather-server.mjs [--port N]; listens on 127.0.0.1 and prints `LISTENING <port>`.
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
// It imports only dependencies of the package (the SDK's v2 server and zod), so it also runs from an installed
// mcp-interlock: node node_modules/mcp-interlock/examples/servers/weather-server.mjs
import { McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { z } from 'zod';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' } } });

function forecastFor(city) {
  // A stable pseudo-forecast derived from the city name, so the demo prints the same thing every time.
  let h = 0;
  for (const ch of city) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  const temps = [h % 15, (h >>> 4) % 15, (h >>> 8) % 15].map((t) => t + 5);
  const skies = ['sunny', 'cloudy', 'rain', 'windy'];
  return temps.map((t, i) => `day ${i + 1}: ${t} °C, ${skies[(h >>> (i * 3)) % skies.length]}`).join('\n');
}

function createMcpServer() {
  const server = new McpServer({ name: 'interlock-example-weather', version: '1.0.0' });
  server.registerTool(
    'get_forecast',
    {
      description: 'Three-day forecast for a city.',
      inputSchema: z.object({ city: z.string().min(1).max(80) }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ city }) => ({
      content: [{ type: 'text', text: `Forecast for ${city}:\n${forecastFor(city)}` }],
    }),
  );
  server.registerTool(
    'set_alert',
    {
      description: 'Subscribe a phone number to storm alerts.',
      inputSchema: z.object({ phone: z.string(), city: z.string() }),
    },
    async ({ city }) => ({ content: [{ type: 'text', text: `Alert set for ${city}.` }] }),
  );
  return server;
}

const http = createServer(async (req, res) => {
  if (req.url !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  if (req.method !== 'POST') {
    res.writeHead(405, { Allow: 'POST' }).end();
    return;
  }
  // Stateless Streamable HTTP: one server and transport per request, answered with one JSON body.
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers))
    if (typeof value === 'string') headers.set(name, value);
  const request = new Request(`http://127.0.0.1${req.url}`, {
    method: 'POST',
    headers,
    body: Buffer.concat(chunks),
  });
  const server = createMcpServer();
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  try {
    await server.connect(transport);
    const response = await transport.handleRequest(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  } catch (err) {
    process.stderr.write(`weather server: ${err?.stack ?? err}\n`);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  } finally {
    await server.close();
  }
});

http.listen(Number(values.port), '127.0.0.1', () => {
  process.stdout.write(`LISTENING ${http.address().port}\n`);
});
const stop = () => http.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
