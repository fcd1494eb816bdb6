// Shared state on Redis: one quota counted across processes, a broadcast, and decision logs in a stream.
import { CapabilityGate, CapabilitySet } from 'mcp-interlock/security';
import { RedisStateStore, StreamAuditSink } from 'mcp-interlock/state';

export async function main(url = 'redis://127.0.0.1:6379') {
  await using store = await RedisStateStore.connect({ url, keyPrefix: 'interlock:prod:' });

  // At most 3 calls a minute for this agent, whichever process or host makes them (the server's clock decides).
  const window = await store.consume('agent-a:search', 3, 60_000);

  // Every process subscribed to 'policy' hears this.
  let heard!: (message: string) => void;
  const message = new Promise<string>((resolve) => {
    heard = resolve;
  });
  await store.subscribe('policy', (m) => heard(m));
  await store.publish('policy', 'revision 42');

  // Every decision of this gate also lands in the Redis stream `interlock:prod:stream:audit`.
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:search:query', 'execute');
  const gate = new CapabilityGate({ capabilities, audit: new StreamAuditSink(store) });
  await gate.authorize({ resource: 'mcp:search:query', action: 'execute', context: { agent: 'agent-a' } });

  return {
    allowed: window.allowed,
    used: window.used,
    message: await message,
    logged: (await store.records('audit')).length,
  };
}
