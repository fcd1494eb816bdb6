// Leased quota units: most maxCalls decisions need no Redis round trip, and the fleet still never exceeds the quota.
import { CapabilityGate, CapabilitySet } from 'mcp-interlock/security';
import { FleetQuotaCounter, RedisStateStore } from 'mcp-interlock/state';

export async function main(url = 'redis://127.0.0.1:6379') {
  await using store = await RedisStateStore.connect({ url, keyPrefix: 'interlock:prod:' });
  // Blocks of at most 256 units; units unspent for 2 s go back to the fleet (and all of them on close).
  await using quotaCounter = new FleetQuotaCounter(store, { lease: { maxBlock: 256, idleMs: 2_000 } });

  const capabilities = new CapabilitySet({ quotaCounter });
  capabilities.grant('mcp:search:query', 'execute', { id: 'search-budget', maxCalls: 100, per: '1h' });
  const gate = new CapabilityGate({ capabilities });

  const request = { resource: 'mcp:search:query', action: 'execute', context: { agent: 'agent-a' } };
  let allowed = 0;
  for (let i = 0; i < 120; i++) {
    if (
      await gate.authorize(request).then(
        () => true,
        () => false,
      )
    )
      allowed += 1;
  }
  return { allowed };
}
