/**
 * Contender `sdk2`: the raw client of the SDK's v2 packages (`@modelcontextprotocol/client`), the one Interlock is
 * built on. The baseline stays the 1.x client (`sdk`); this column separates what the v2 client costs from
 * what Interlock adds on top of it.
 * One `Client` per server, connected with `Promise.all`, tools listed once. After a server dies it is
 * reconnected by hand on `onclose` (new transport, `connect`, `listTools`), the least an app must write.
 */
import { Client, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { type ContenderAdapter, type ServerSpec, type Session, textOf } from '../lib/contender.js';
import { runContender } from '../lib/worker.js';

function transportFor(spec: ServerSpec): Transport {
  return spec.transport === 'stdio'
    ? new StdioClientTransport({ command: spec.command, args: spec.args })
    : new StreamableHTTPClientTransport(new URL(spec.url));
}

async function open(spec: ServerSpec): Promise<Client> {
  const client = new Client({ name: 'bench-sdk2', version: '1.0.0' });
  await client.connect(transportFor(spec));
  await client.listTools();
  return client;
}

const sdk2: ContenderAdapter = {
  id: 'sdk2',
  reconnect: { kind: 'auto' },
  async connect(servers) {
    const clients = new Map<string, Client>();
    let closed = false;
    const watch = (spec: ServerSpec, client: Client) => {
      client.onclose = () => {
        if (closed || clients.get(spec.name) !== client) return;
        clients.delete(spec.name);
        void open(spec).then((next) => {
          if (closed) void next.close();
          else {
            clients.set(spec.name, next);
            watch(spec, next);
          }
        });
      };
    };
    await Promise.all(
      servers.map(async (spec) => {
        const client = await open(spec);
        clients.set(spec.name, client);
        watch(spec, client);
      }),
    );
    const session: Session = {
      async call(server, text) {
        const client = clients.get(server);
        if (client === undefined) throw new Error(`${server} is not connected`);
        return textOf(await client.callTool({ name: 'echo', arguments: { text } }));
      },
      async close() {
        closed = true;
        await Promise.allSettled([...clients.values()].map((c) => c.close()));
      },
    };
    return session;
  },
};

await runContender(sdk2);
