/**
 * Contender `mastra`: `@mastra/mcp` `MCPClient`, each call through the Mastra tool it hands out
 * (`tool.execute({ context })`), as a Mastra agent calls tools. Mastra reconnects a dead server on the next
 * call that fails with a connection error.
 */
import { randomUUID } from 'node:crypto';
import { type ContenderAdapter, type Session, textOf } from '../lib/contender.js';
import { importPeer } from '../lib/peers.js';
import { runContender } from '../lib/worker.js';

interface MastraTool {
  execute(input: { context: Record<string, unknown> }): Promise<unknown>;
}
interface MastraClient {
  getToolsets(): Promise<Record<string, Record<string, MastraTool>>>;
  disconnect(): Promise<void>;
}
type MastraModule = { MCPClient: new (options: unknown) => MastraClient };

const { MCPClient } = await importPeer<MastraModule>('@mastra/mcp');

const mastra: ContenderAdapter = {
  id: 'mastra',
  reconnect: { kind: 'auto' },
  async connect(servers) {
    const client = new MCPClient({
      // A fresh id per client: Mastra refuses two clients with the same configuration otherwise.
      id: `bench-${randomUUID()}`,
      servers: Object.fromEntries(
        servers.map((spec) => [
          spec.name,
          spec.transport === 'stdio'
            ? { command: spec.command, args: spec.args }
            : { url: new URL(spec.url) },
        ]),
      ),
    });
    let toolsets: Record<string, Record<string, MastraTool>>;
    try {
      toolsets = await client.getToolsets();
    } catch (err) {
      await client.disconnect().catch(() => {});
      throw err;
    }
    const echoes = new Map(servers.map((spec) => [spec.name, toolsets[spec.name]?.echo]));
    const session: Session = {
      async call(server, text) {
        const echo = echoes.get(server);
        if (echo === undefined) throw new Error(`no echo tool from ${server}`);
        return textOf(await echo.execute({ context: { text } }));
      },
      close: () => client.disconnect(),
    };
    return session;
  },
};

await runContender(mastra);
