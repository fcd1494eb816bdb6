#!/usr/bin/env node
// The bench's minimal MCP server (issue 8, "Harness"): newline-delimited JSON-RPC on stdin/stdout, written
// by hand with no SDK, with one tool `echo` that returns its `text` argument. It does as little as a
// server can, so what a benchmark measures is the client.
//
//   node echo-raw.mjs [--delay-ms N] [--pid-dir DIR]
//
// --delay-ms N  waits N ms before serving (a slow server start, for the parallel connect figure).
// --pid-dir DIR writes an empty file DIR/<pid> at start (the reconnect figure finds the pid to kill there).
// Exits when stdin ends. Writes nothing to stderr.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { 'delay-ms': { type: 'string', default: '0' }, 'pid-dir': { type: 'string' } },
});
const delayMs = Number(values['delay-ms']);
if (values['pid-dir'] !== undefined) {
  try {
    writeFileSync(join(values['pid-dir'], String(process.pid)), '');
  } catch {
    process.exit(1); // the benchmark that asked for it is gone: so is the reason to run
  }
}

const ECHO_TOOL = {
  name: 'echo',
  description: 'Returns its text argument.',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string', description: 'The text to return.' } },
    required: ['text'],
    additionalProperties: false,
  },
};
const SERVER_INFO = { name: 'bench-echo-raw', version: '1.0.0' };
// Answer with the version the client asked for: every client here speaks one these accept.
const DEFAULT_PROTOCOL_VERSION = '2025-06-18';

function reply(id, result) {
  return `${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`;
}
function fail(id, code, message) {
  return `${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`;
}

function handle(message) {
  if (typeof message !== 'object' || message === null || typeof message.method !== 'string') return '';
  const { id, method, params } = message;
  if (id === undefined) return ''; // a notification: nothing to answer
  switch (method) {
    case 'initialize':
      return reply(id, {
        protocolVersion: params?.protocolVersion ?? DEFAULT_PROTOCOL_VERSION,
        capabilities: { tools: { listChanged: false } },
        serverInfo: SERVER_INFO,
      });
    case 'ping':
      return reply(id, {});
    case 'tools/list':
      return reply(id, { tools: [ECHO_TOOL] });
    case 'tools/call': {
      if (params?.name !== 'echo') return fail(id, -32602, `Unknown tool: ${String(params?.name)}`);
      const text = params.arguments?.text;
      if (typeof text !== 'string') return fail(id, -32602, 'echo needs a string argument `text`');
      return reply(id, { content: [{ type: 'text', text }] });
    }
    default:
      return fail(id, -32601, `Method not found: ${method}`);
  }
}

function serve() {
  let pending = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    pending += chunk;
    let out = '';
    let nl = pending.indexOf('\n');
    while (nl !== -1) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (line !== '') {
        try {
          out += handle(JSON.parse(line));
        } catch {
          out += fail(null, -32700, 'Parse error');
        }
      }
      nl = pending.indexOf('\n');
    }
    // One write per chunk: requests that arrived together are answered together.
    if (out !== '') process.stdout.write(out);
  });
  process.stdin.on('end', () => process.exit(0));
}

if (delayMs > 0) setTimeout(serve, delayMs);
else serve();
