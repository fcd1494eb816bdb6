// An engine whose agents share one Redis with the rest of the fleet: quotas, pins, OAuth tokens, shared policies.
import { Engine } from 'mcp-interlock/engine';
import { RedisStateStore, SharedPolicy } from 'mcp-interlock/state';
import { scriptedModel } from 'mcp-interlock/testing';

export async function main(url = 'redis://127.0.0.1:6379') {
  await using store = await RedisStateStore.connect({ url, keyPrefix: 'interlock:docs-engine:' });

  // The team's policy, published once by any process (an admin tool, a deploy step).
  await using team = await SharedPolicy.open(store, {
    name: 'team',
    initial: {
      version: 1,
      rules: [
        {
          id: 'search-budget',
          effect: 'allow',
          resource: 'mcp:search:query',
          actions: ['execute'],
          maxCalls: 100,
          per: '1h',
        },
      ],
    },
  });

  await using engine = new Engine({
    state: {
      store,
      principal: 'tenant-acme',
      policies: ['team'],
      // While Redis is away, each of the 4 replicas gives at most its share of what was left.
      quotaFallback: { localShare: { replicas: 4 } },
    },
  });
  const agent = await engine.createAgent({
    name: 'researcher',
    model: scriptedModel(['done']),
    capabilities: 'team',
  });

  // The agent decides with the shared version; `team.revoke('search-budget')` anywhere would reach it at once.
  return { decidedBy: agent.mcp.capabilities.policyRevision, published: team.version };
}
