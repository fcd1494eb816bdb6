// The gateway inside your own process: the notes server behind the gate, one reader and one editor.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Gateway, ServerRequestRelay } from 'mcp-interlock/gateway';
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

export async function main(notesServer: string) {
  // The project policy is the upper bound: no caller ever gets more than this.
  const capabilities = CapabilitySet.fromPolicy({
    version: 1,
    rules: [
      { effect: 'allow', resource: 'mcp:notes:read_note', actions: 'execute' },
      { effect: 'allow', resource: 'mcp:notes:write_note', actions: 'execute' },
    ],
  });
  // Questions the servers ask during a call (elicitation, sampling) go to the client that made the call.
  const relay = new ServerRequestRelay();
  await using manager = new MCPClientManager({ capabilities, ...relay.handlers });
  await manager.connectServer({
    name: 'notes',
    transport: 'stdio',
    command: process.execPath,
    args: [notesServer],
  });

  await using gateway = new Gateway({
    manager,
    relay,
    config: {
      auth: {
        // Development keys; in production, JWT access tokens from your authorization server (auth.jwt).
        apiKeys: [
          { key: 'reader-key-0123456789abcdef', subject: 'reader' },
          { key: 'editor-key-0123456789abcdef', subject: 'editor', groups: ['editors'] },
        ],
      },
      principals: [
        {
          match: { subjects: ['reader'], groups: ['editors'] },
          rules: [{ effect: 'allow', resource: 'mcp:notes:read_note', actions: 'execute' }],
        },
        {
          match: { groups: ['editors'] },
          rules: [{ effect: 'allow', resource: 'mcp:notes:write_note', actions: 'execute' }],
        },
      ],
      http: { port: 0 }, // any free port on 127.0.0.1
    },
  });
  const { url } = await gateway.listen();

  // Any MCP client will do; here the SDK's, as the reader.
  // `auto` lets the client speak 2026-07-28 when the server offers it (the gateway does).
  const reader = new Client(
    { name: 'reader-app', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } },
  );
  await reader.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { authorization: 'Bearer reader-key-0123456789abcdef' } },
    }),
  );
  const tools = (await reader.listTools()).tools.map((t) => t.name);
  // A tool the reader may not see answers exactly as one that does not exist (the audit keeps the denial).
  const writeRefused = await reader
    .callTool({ name: 'mcp__notes__write_note', arguments: { id: 'drafts/x', text: 'hi' } })
    .then(
      () => false,
      (err: Error) => err.message.includes('Unknown tool: mcp__notes__write_note'),
    );
  await reader.close();
  return { tools, writeRefused };
}
