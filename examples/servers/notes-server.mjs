#!/usr/bin/env node
// Example stdio MCP server bundled with Interlock: a small in-memory notebook.
// Run: node examples/servers/notes-server.mjs (speaks MCP on stdin/stdout).
// It imports only dependencies of the package (the SDK's v2 server and zod), so it also runs from an installed
// mcp-interlock: node node_modules/mcp-interlock/examples/servers/notes-server.mjs
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const notes = new Map([
  ['drafts/welcome', 'Welcome to the notes server.'],
  ['team/roadmap', 'Q1: ship the capability gate. Q2: reliability.'],
]);

const server = new McpServer({ name: 'interlock-example-notes', version: '1.0.0' });

server.registerTool(
  'list_notes',
  {
    description: 'List the ids of all notes.',
    inputSchema: z.object({}),
    annotations: { readOnlyHint: true },
  },
  async () => ({ content: [{ type: 'text', text: [...notes.keys()].join('\n') }] }),
);

server.registerTool(
  'read_note',
  {
    description: 'Read one note by id.',
    inputSchema: z.object({ id: z.string().describe('Note id, e.g. drafts/welcome') }),
    annotations: { readOnlyHint: true },
  },
  async ({ id }) => {
    const text = notes.get(id);
    if (text === undefined) return { isError: true, content: [{ type: 'text', text: `No note '${id}'.` }] };
    return { content: [{ type: 'text', text }] };
  },
);

server.registerTool(
  'write_note',
  {
    description: 'Create or replace a note.',
    inputSchema: z.object({ id: z.string(), text: z.string().max(10_000) }),
    annotations: { destructiveHint: true },
  },
  async ({ id, text }) => {
    notes.set(id, text);
    return { content: [{ type: 'text', text: `Saved '${id}' (${text.length} chars).` }] };
  },
);

server.registerTool(
  'delete_note',
  {
    description: 'Delete a note.',
    inputSchema: z.object({ id: z.string() }),
    annotations: { destructiveHint: true },
  },
  async ({ id }) => ({
    content: [{ type: 'text', text: notes.delete(id) ? `Deleted '${id}'.` : `No note '${id}'.` }],
  }),
);

server.registerResource('readme', 'notes://readme', { mimeType: 'text/plain' }, async (uri) => ({
  contents: [{ uri: uri.href, text: 'Notes are ids like drafts/x or team/x.' }],
}));

await server.connect(new StdioServerTransport());
process.stdin.on('end', () => process.exit(0));
