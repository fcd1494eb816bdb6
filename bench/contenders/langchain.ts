/**
 * Contender `langchain`: `@langchain/mcp-adapters` `MultiServerMCPClient`, each call through the LangChain
 * tool it hands out (`tool.invoke`), as an agent built on it calls tools. Stdio servers have `restart`
 * enabled (no delay), the library's own way back after a server dies.
 */
import { type ContenderAdapter, type Session, textOf } from '../lib/contender.js';
import { importPeer } from '../lib/peers.js';
import { runContender } from '../lib/worker.js';

interface LcTool {
  name: string;
  invoke(input: Record<string, unknown>): Promise<unknown>;
}
interface LcClient {
  initializeConnections(): Promise<Record<string, LcTool[]>>;
  close(): Promise<void>;
}
type LcModule = { MultiServerMCPClient: new (config: unknown) => LcClient };

const { MultiServerMCPClient } = await importPeer<LcModule>('@langchain/mcp-adapters');

const langchain: ContenderAdapter = {
  id: 'langchain',
  reconnect: { kind: 'auto' },
  async connect(servers) {
    const mcpServers = Object.fromEntries(
      servers.map((spec) => [
        spec.name,
        spec.transport === 'stdio'
          ? {
              transport: 'stdio',
              command: spec.command,
              args: spec.args,
              restart: { enabled: true, maxAttempts: 1000, delayMs: 0 },
            }
          : { transport: 'http', url: spec.url },
      ]),
    );
    const client = new MultiServerMCPClient({
      mcpServers,
      throwOnLoadError: true,
      onConnectionError: 'throw',
    });
    // `initializeConnections` hands back the client's own server -> tools record, which a restart refills
    // with tools bound to the new process: reading it on each call follows restarts without calling
    // `initializeConnections` again (which, during a restart, would start a second process).
    let byServer: Record<string, LcTool[]>;
    try {
      byServer = await client.initializeConnections();
      for (const spec of servers) echoOf(byServer, spec.name);
    } catch (err) {
      await client.close().catch(() => {});
      throw err;
    }
    const session: Session = {
      call: async (server, text) => textOf(await echoOf(byServer, server).invoke({ text })),
      close: () => client.close(),
    };
    return session;
  },
};

const cache = new WeakMap<LcTool[], LcTool>();
function echoOf(byServer: Record<string, LcTool[]>, server: string): LcTool {
  const tools = byServer[server];
  if (tools === undefined) throw new Error(`no tools from ${server}`);
  let echo = cache.get(tools);
  if (echo === undefined) {
    echo = tools.find((t) => t.name === 'echo' || t.name.endsWith('__echo'));
    if (echo === undefined) throw new Error(`no echo tool from ${server}`);
    cache.set(tools, echo);
  }
  return echo;
}

await runContender(langchain);
