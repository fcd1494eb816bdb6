// Pins and OAuth tokens for a fleet, without the engine: wire them into a manager yourself.
import { createServerAuth, StateTokenStore } from 'mcp-interlock/auth';
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet, PinStore } from 'mcp-interlock/security';
import { FleetQuotaCounter, RedisStateStore, SharedPins } from 'mcp-interlock/state';

export async function main(url = 'redis://127.0.0.1:6379', pinFile = '.interlock/pins.json') {
  await using store = await RedisStateStore.connect({ url, keyPrefix: 'interlock:docs-pins:' });

  // The pin file's pins join the fleet's (where it has none); then the fleet's are this process's.
  await using shared = await SharedPins.open(store, { pins: await PinStore.load(pinFile) });

  const capabilities = CapabilitySet.fromPolicy(
    {
      version: 1,
      rules: [{ id: 'echo-10', effect: 'allow', resource: 'mcp:echo:*', actions: 'execute', maxCalls: 10 }],
    },
    // Fail closed while Redis is away (the default); { localShare: { replicas } } is the other choice.
    { quotaCounter: new FleetQuotaCounter(store, { onUnavailable: 'deny' }) },
  );
  await using manager = new MCPClientManager({
    capabilities,
    principal: 'tenant-acme',
    pins: shared.pins,
    // OAuth state in Redis: one process refreshes a token, the others wait and reuse it.
    serverAuth: createServerAuth({ store: new StateTokenStore(store) }),
  });

  // What another process (here: a second follower of the same pins) sees of a pin approved here.
  await using other = await SharedPins.open(store);
  shared.pins.set('search', 'query', 'c'.repeat(64));
  await shared.flush();
  await other.refresh();
  return {
    seenElsewhere: other.pins.get('search', 'query') === 'c'.repeat(64),
    blocked: manager.blockedTools,
  };
}
