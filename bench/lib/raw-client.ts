/**
 * The raw SDK contenders (`sdk`, the 1.x client, and `sdk2`, the v2 client): one client per server, connected
 * with `Promise.all`, tools listed once. After a server dies it is reconnected by hand on `onclose` (new
 * transport, `connect`, `listTools`), the least an app must write. Only how a client is opened differs.
 */
import type { ContenderAdapter, ServerSpec, Session } from './contender.js';
import { textOf } from './contender.js';

/** What the harness needs of either SDK's `Client`. */
export interface RawClient {
  onclose?: (() => void) | undefined;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

/** A contender that calls `client.callTool` on clients `open` connects (tools listed). */
export function rawClientContender(
  id: string,
  open: (spec: ServerSpec) => Promise<RawClient>,
): ContenderAdapter {
  return {
    id,
    reconnect: { kind: 'auto' },
    async connect(servers) {
      const clients = new Map<string, RawClient>();
      let closed = false;
      const watch = (spec: ServerSpec, client: RawClient) => {
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
}
