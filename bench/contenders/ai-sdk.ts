/**
 * Contender `ai-sdk`: the Vercel AI SDK's MCP client (`@ai-sdk/mcp` `createMCPClient`), each call through the
 * AI SDK tool it hands out (`tool.execute(args, options)`), as `generateText` calls tools. It has no
 * multi-server client, so servers connect with one client each under `Promise.all`, and it does not
 * reconnect a server that died.
 */
import { type ContenderAdapter, type Session, textOf } from '../lib/contender.js';
import { importPeer } from '../lib/peers.js';
import { runContender } from '../lib/worker.js';

interface AiTool {
  execute(
    input: Record<string, unknown>,
    options: { toolCallId: string; messages: unknown[] },
  ): Promise<unknown>;
}
interface AiClient {
  tools(): Promise<Record<string, AiTool>>;
  close(): Promise<void>;
}
type AiModule = { createMCPClient(config: { transport: unknown }): Promise<AiClient> };
type AiStdioModule = {
  Experimental_StdioMCPTransport: new (config: { command: string; args: string[] }) => unknown;
};

const { createMCPClient } = await importPeer<AiModule>('@ai-sdk/mcp');
const { Experimental_StdioMCPTransport } = await importPeer<AiStdioModule>('@ai-sdk/mcp/mcp-stdio');

let callIds = 0;

const aiSdk: ContenderAdapter = {
  id: 'ai-sdk',
  reconnect: {
    kind: 'none',
    reason:
      'the AI SDK MCP client does not reconnect: after its server dies every call fails until the app creates a new client',
  },
  async connect(servers) {
    const clients: AiClient[] = [];
    const echoes = new Map<string, AiTool>();
    const settled = await Promise.allSettled(
      servers.map(async (spec) => {
        const client = await createMCPClient({
          transport:
            spec.transport === 'stdio'
              ? new Experimental_StdioMCPTransport({ command: spec.command, args: spec.args })
              : { type: 'http', url: spec.url },
        });
        clients.push(client);
        const echo = (await client.tools()).echo;
        if (echo === undefined) throw new Error(`no echo tool from ${spec.name}`);
        echoes.set(spec.name, echo);
      }),
    );
    const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    const close = async () => {
      await Promise.allSettled(clients.map((c) => c.close()));
    };
    if (failure !== undefined) {
      await close();
      throw failure.reason;
    }
    const session: Session = {
      async call(server, text) {
        const echo = echoes.get(server);
        if (echo === undefined) throw new Error(`no echo tool from ${server}`);
        return textOf(await echo.execute({ text }, { toolCallId: `call-${++callIds}`, messages: [] }));
      },
      close,
    };
    return session;
  },
};

await runContender(aiSdk);
