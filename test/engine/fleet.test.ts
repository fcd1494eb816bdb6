/**
 * The engine's `state` option (issue 16): one state store and principal for every agent. Two engines on two
 * connections to one real redis-server stand for two processes of a fleet: quotas of policy objects hold across
 * them, agents act for the principal, pins go to the store, and shared policies are capability sets by name.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import { MemoryAuditSink } from '../../src/security/index.js';
import { RedisStateStore } from '../../src/state/redis.js';
import { SharedPins } from '../../src/state/shared-pins.js';
import { SharedPolicy } from '../../src/state/shared-policy.js';
import { scriptedModel } from '../../src/testing/index.js';
import { nodeFixture } from '../helpers/fixtures.js';
import { redisForFile } from '../helpers/redis.js';

const redisServer = redisForFile();
const echo = { name: 'echo', transport: 'stdio' as const, ...nodeFixture('echo') };

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function connect(prefix: string): Promise<RedisStateStore> {
  const store = await RedisStateStore.connect({ url: redisServer.current.url, keyPrefix: prefix });
  cleanup.push(() => store.close());
  return store;
}

function engineOn(store: RedisStateStore, audit: MemoryAuditSink, policies?: string[]): Engine {
  const engine = new Engine({ audit, state: { store, principal: 'acme', policies } });
  cleanup.push(() => engine.close());
  return engine;
}

describe('Engine state option', () => {
  it('two engines on one Redis share a quota, act for the principal, and keep pins in the store', async () => {
    const prefix = 'engine-fleet:';
    const audits = [new MemoryAuditSink(), new MemoryAuditSink()];
    const engines = [
      engineOn(await connect(prefix), audits[0]!),
      engineOn(await connect(prefix), audits[1]!),
    ];
    const policy = {
      version: 1,
      rules: [
        { id: 'echo-3', effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'], maxCalls: 3 },
      ],
    };
    const agents = await Promise.all(
      engines.map((engine) =>
        engine.createAgent({
          name: 'bot',
          model: scriptedModel(['done']),
          capabilities: policy,
          mcpServers: [echo],
        }),
      ),
    );
    const call = (i: number) =>
      agents[i]!.mcp.executeTool('mcp__echo__echo', { text: 'hi' }).then(
        () => 'ok',
        (err: { code?: string }) => err.code,
      );
    expect([await call(0), await call(1), await call(0), await call(1), await call(0)]).toEqual([
      'ok',
      'ok',
      'ok',
      'CAPABILITY_DENIED',
      'CAPABILITY_DENIED',
    ]);
    expect(new Set(audits.flatMap((a) => a.records.map((r) => r.principal)))).toEqual(new Set(['acme']));

    // The first sighting of the echo tool is the fleet's pin, and both agents hold it.
    const hash = agents[0]!.mcp.pins.get('echo', 'echo');
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    await using reader = await SharedPins.open(await connect(prefix), { pollMs: 0 });
    await expect.poll(() => reader.refresh().then(() => reader.pins.get('echo', 'echo'))).toBe(hash);
    expect(agents[1]!.mcp.pins.get('echo', 'echo')).toBe(hash);
  });

  it('a shared policy is a capability set by name, and a revoke published elsewhere reaches the agent', async () => {
    const prefix = 'engine-policy:';
    await using publisher = await SharedPolicy.open(await connect(prefix), {
      name: 'team',
      initial: {
        version: 1,
        rules: [{ id: 'echo', effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] }],
      },
    });
    const engine = engineOn(await connect(prefix), new MemoryAuditSink(), ['team']);
    const agent = await engine.createAgent({
      name: 'member',
      model: scriptedModel(['done']),
      capabilities: 'team',
      mcpServers: [echo],
    });
    await expect(agent.mcp.executeTool('mcp__echo__echo', { text: 'hi' })).resolves.toBe('hi');
    const version = await publisher.revoke('echo');
    await expect.poll(() => agent.mcp.capabilities.policyRevision).toBe(`team@${version}`);
    await expect(agent.mcp.executeTool('mcp__echo__echo', { text: 'hi' })).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
    });
    await expect(
      engine.createAgent({ name: 'x', model: scriptedModel([]), capabilities: 'nope' }),
    ).rejects.toThrow(/known: 'team'/);
  });

  it('with leased quota units, two engines still get exactly the quota between them, and closing gives the rest back', async () => {
    const prefix = 'engine-lease:';
    const audit = new MemoryAuditSink();
    const stores = [await connect(prefix), await connect(prefix)];
    const engines = stores.map(
      (store) => new Engine({ audit, state: { store, quotaLease: { maxBlock: 4, idleMs: 600_000 } } }),
    );
    const policy = {
      version: 1,
      rules: [
        { id: 'echo-9', effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'], maxCalls: 9 },
      ],
    };
    const agents = await Promise.all(
      engines.map((engine) =>
        engine.createAgent({
          name: 'bot',
          model: scriptedModel(['done']),
          capabilities: policy,
          mcpServers: [echo],
        }),
      ),
    );
    // Each agent calls until refused: between them they get every unit, and no more.
    const untilRefused = async (i: number) => {
      let ok = 0;
      while (
        await agents[i]!.mcp.executeTool('mcp__echo__echo', { text: 'hi' }).then(
          () => true,
          () => false,
        )
      )
        ok++;
      return ok;
    };
    const [a, b] = await Promise.all([untilRefused(0), untilRefused(1)]);
    expect(a + b).toBe(9);
    const key = JSON.stringify(['echo-9', 'bot', '']);
    expect(await stores[0]!.used(key)).toBe(9);
    // One call in a fresh key leases units ahead of need; closing the engine gives those back.
    const other = { ...policy, rules: [{ ...policy.rules[0]!, id: 'echo-other', maxCalls: 100 }] };
    const agent = await engines[0]!.createAgent({
      name: 'bot',
      model: scriptedModel(['done']),
      capabilities: other,
      mcpServers: [echo],
    });
    await expect(agent.mcp.executeTool('mcp__echo__echo', { text: 'hi' })).resolves.toBe('hi');
    const otherKey = JSON.stringify(['echo-other', 'bot', '']);
    await expect.poll(() => stores[0]!.used(otherKey)).toBeGreaterThan(1);
    await Promise.all(engines.map((e) => e.close()));
    expect(await stores[0]!.used(otherKey)).toBe(1);
  });

  it('refuses a bad state option with INVALID_CONFIG naming the field', async () => {
    const store = await connect('engine-bad:');
    expect(() => new Engine({ state: { store, quotaFallback: { localShare: { replicas: 0 } } } })).toThrow(
      expect.objectContaining({
        code: 'INVALID_CONFIG',
        message: expect.stringContaining('state.quotaFallback'),
      }),
    );
    expect(() => new Engine({ state: { store, quotaLease: { maxBlock: 0 } } })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringContaining('lease.maxBlock') }),
    );
    expect(() => new Engine({ state: { store, principal: 'a b' } })).toThrow(
      expect.objectContaining({
        code: 'INVALID_CONFIG',
        message: expect.stringContaining('state.principal'),
      }),
    );
    expect(() => new Engine({ state: { store: {} as RedisStateStore } })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringContaining('state.store') }),
    );
  });
});
