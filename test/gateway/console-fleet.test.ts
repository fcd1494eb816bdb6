// The console across a fleet (issue 41): two gateways write their decisions to the fleet's Redis audit stream (a
// real redis-server), and the console of one shows a denial made through the other; sessions are the fleet's, so
// an operator signed in on one replica is signed in on every one.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { StreamAuditSink } from '../../src/state/audit-stream.js';
import { MemoryStateStore } from '../../src/state/memory.js';
import { FleetQuotaCounter } from '../../src/state/quota-counter.js';
import { RedisStateStore } from '../../src/state/redis.js';
import { SharedPolicy } from '../../src/state/shared-policy.js';
import { nodeFixture } from '../helpers/index.js';
import { redisForFile } from '../helpers/redis.js';
import { csrfOf, getPage, OPS_KEY, postForm, signIn } from './console-helpers.js';

// Persistent, as a production store is: a restarted redis-server still holds the console's sessions.
const redis = redisForFile({ persist: true });
const BOB_KEY = 'bob-key-0123456789abcdef01';
const closers: (() => Promise<unknown>)[] = [];

async function replica(store: RedisStateStore, withConsole: boolean, quota = false) {
  const echo = { id: 'echo', effect: 'allow' as const, resource: 'mcp:echo:echo', actions: ['execute'] };
  const rule = quota ? { ...echo, maxCalls: 5, per: '1h' } : echo;
  const manager = new MCPClientManager({
    capabilities: CapabilitySet.fromPolicy(
      { version: 1, rules: [rule] },
      // With a quota, the fleet's counter in Redis: every replica charges the same key per principal.
      quota ? { quotaCounter: new FleetQuotaCounter(store) } : {},
    ),
  });
  await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
  const gateway = new Gateway({
    manager,
    store,
    audit: new StreamAuditSink(store, { stream: 'audit' }),
    config: {
      auth: {
        apiKeys: [
          { key: OPS_KEY, subject: 'ops' },
          { key: BOB_KEY, subject: 'bob' },
        ],
      },
      operators: { apiKey: { subjects: ['ops'] } },
      http: { port: 0 },
      ...(withConsole ? { console: { path: '/console', auditStream: 'audit' } } : {}),
    },
  });
  const address = await gateway.listen();
  closers.push(
    () => gateway.close(),
    () => manager.close(),
  );
  return address;
}

let stores: RedisStateStore[];

beforeAll(async () => {
  stores = await Promise.all(
    [0, 1].map(() => RedisStateStore.connect({ url: redis.current.url, keyPrefix: 'console-fleet:' })),
  );
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await Promise.all((stores ?? []).map((s) => s.close()));
});

describe('the console in a fleet', () => {
  it("shows a denial made through another replica, read from the fleet's audit stream", async () => {
    const withConsole = await replica(stores[0] as RedisStateStore, true);
    const other = await replica(stores[1] as RedisStateStore, false);
    const bob = new Client({ name: 'fleet', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await bob.connect(
      new StreamableHTTPClientTransport(other.url, {
        requestInit: { headers: { authorization: `Bearer ${BOB_KEY}` } },
      }),
    );
    // bob is not in any binding (none are configured), so the project policy applies: `add` is denied.
    await bob.callTool({ name: 'mcp__echo__add', arguments: { a: 1, b: 2 } }).catch(() => undefined);
    await bob.close();
    const cookie = await signIn(withConsole.console as URL, OPS_KEY);
    await expect
      .poll(async () => (await getPage(`${withConsole.console?.href}/live?principal=bob`, cookie)).text())
      .toMatch(
        /<td>bob<\/td><td><code>mcp__echo__add<\/code><\/td><td>execute<\/td><td class="effect-[a-z-]+">denied/,
      );
  });

  it('serves a session signed in on one replica on every other, and a sign-out on one ends it on all', async () => {
    // Two replicas behind a balancer without stickiness: each request of the browser may land on either.
    const [a, b] = [
      await replica(stores[0] as RedisStateStore, true),
      await replica(stores[1] as RedisStateStore, true),
    ];
    const at = (replica: typeof a, path: string) => `${replica.console?.href}${path}`;
    const cookie = await signIn(a.console as URL, OPS_KEY);
    const page = await getPage(at(b, '/servers'), cookie);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('ops');
    // A form of B's page posted to A (its CSRF token is the session's, wherever the page came from) ...
    const approve = { name: 'mcp__echo__nothing', hash: 'abcdef123456', _csrf: csrfOf(html) };
    expect((await postForm(at(a, '/blocked/approve'), approve, { cookie })).status).toBe(303);
    // ... and what the action said shows on the page it redirects to, served by B.
    expect(await (await getPage(at(b, '/blocked'), cookie)).text()).toContain(
      'mcp__echo__nothing was not approved',
    );
    const signOut = await postForm(at(b, '/signout'), { _csrf: csrfOf(html) }, { cookie });
    expect(signOut.status).toBe(303);
    for (const replica of [a, b]) {
      const after = await getPage(at(replica, '/servers'), cookie);
      expect(after.status).toBe(303);
      expect(after.headers.get('location')).toMatch(/\/signin$/);
    }
  });

  it("shows the quota use the fleet's store holds, counted through another replica", async () => {
    const quotaStores = await Promise.all(
      [0, 1].map(() => RedisStateStore.connect({ url: redis.current.url, keyPrefix: 'console-quota:' })),
    );
    closers.push(() => Promise.all(quotaStores.map((s) => s.close())));
    const withConsole = await replica(quotaStores[0] as RedisStateStore, true, true);
    const other = await replica(quotaStores[1] as RedisStateStore, false, true);
    const bob = new Client({ name: 'fleet', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await bob.connect(
      new StreamableHTTPClientTransport(other.url, {
        requestInit: { headers: { authorization: `Bearer ${BOB_KEY}` } },
      }),
    );
    for (const text of ['one', 'two']) {
      const result = await bob.callTool({ name: 'mcp__echo__echo', arguments: { text } });
      expect(result.isError).not.toBe(true);
    }
    await bob.close();
    const cookie = await signIn(withConsole.console as URL, OPS_KEY);
    const fleetRow = /<td>bob, every caller<\/td><td>echo<\/td><td>2<\/td><td>5<\/td><td>1h<\/td>/;
    // Asked about by name: read from the store, though this replica never saw a call of bob's.
    const asked = await (await getPage(`${withConsole.console?.href}/quota?principal=bob`, cookie)).text();
    expect(asked).toMatch(fleetRow);
    expect(asked).toContain('store holds, for every gateway process');
    // This replica's own table does not pass off a count it does not keep (the store has it) as 0.
    expect(asked).not.toMatch(/<td>echo<\/td><td>0<\/td>/);
    expect(asked).toMatch(/<td>echo<\/td><td>in the fleet’s store<\/td><td>5<\/td>/);
    // Not asked: bob is known from the fleet's audit stream the console follows.
    await expect
      .poll(async () => (await getPage(`${withConsole.console?.href}/quota`, cookie)).text())
      .toMatch(fleetRow);
  });

  it('revokes a rule of the shared policy from the console, for the fleet, and audits it', async () => {
    const store = await RedisStateStore.connect({ url: redis.current.url, keyPrefix: 'console-policy:' });
    closers.push(() => store.close());
    const shared = await SharedPolicy.open(store, {
      initial: {
        version: 1,
        rules: [
          { id: 'echo', effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] },
          { id: 'add', effect: 'allow', resource: 'mcp:echo:add', actions: ['execute'] },
        ],
      },
    });
    closers.push(() => shared.close());
    const manager = new MCPClientManager({ capabilities: shared.capabilities });
    closers.push(() => manager.close());
    const audit = new MemoryAuditSink();
    const gateway = new Gateway({
      manager,
      store,
      sharedPolicy: shared,
      audit,
      config: {
        auth: { apiKeys: [{ key: OPS_KEY, subject: 'ops' }] },
        operators: { apiKey: { subjects: ['ops'] } },
        http: { port: 0 },
        console: { path: '/console' },
      },
    });
    closers.push(() => gateway.close());
    const address = await gateway.listen();
    const base = address.console?.href as string;
    const cookie = await signIn(address.console as URL, OPS_KEY);
    const page = await (await getPage(`${base}/policy`, cookie)).text();
    const before = shared.version;
    expect(page).toContain(`Version <strong>${before}</strong>`);
    expect(page).toContain('aria-label="Revoke rule add"');
    const revoked = await postForm(`${base}/policy/revoke`, { rule: 'add', _csrf: csrfOf(page) }, { cookie });
    expect(revoked.status).toBe(303);
    expect(shared.version).toBeGreaterThan(before);
    expect(shared.policy?.rules.map((r) => r.id)).toEqual(['echo']);
    const after = await (await getPage(`${base}/policy`, cookie)).text();
    expect(after).toContain('Revoked rule add');
    expect(after).not.toContain('aria-label="Revoke rule add"');
    expect(audit.records).toContainEqual(
      expect.objectContaining({ agent: 'console', action: 'revoke-rule', principal: 'ops', allowed: true }),
    );
    // Without the CSRF token nothing is revoked.
    const version = shared.version;
    expect((await postForm(`${base}/policy/revoke`, { rule: 'echo' }, { cookie })).status).toBe(403);
    expect(shared.version).toBe(version);
  });

  it("answers 503 while the fleet's store is down, lets nobody in, and serves the session again once it is back", async () => {
    const store = await RedisStateStore.connect({ url: redis.current.url, keyPrefix: 'console-down:' });
    closers.push(() => store.close());
    const address = await replica(store, true);
    const cookie = await signIn(address.console as URL, OPS_KEY);
    await redis.current.stop();
    try {
      const down = await getPage(`${address.console?.href}/servers`, cookie);
      expect(down.status).toBe(503);
      expect(await down.text()).toContain("The fleet's store is unavailable");
      // A sign-in cannot make a session either.
      const signIn = await postForm(`${address.console?.href}/signin`, { credential: OPS_KEY });
      expect(signIn.status).toBe(503);
    } finally {
      await redis.current.start();
    }
    await expect
      .poll(async () => (await getPage(`${address.console?.href}/servers`, cookie)).status, {
        timeout: 10_000,
      })
      .toBe(200);
  });

  it('refuses auditStream without a Redis store to read it from', async () => {
    const manager = new MCPClientManager({ capabilities: new CapabilitySet() });
    closers.push(() => manager.close());
    const gateway = new Gateway({
      manager,
      store: new MemoryStateStore(),
      config: { http: { port: 0 }, console: { path: '/console', auditStream: 'audit' } },
    });
    closers.push(() => gateway.close());
    await expect(gateway.listen()).rejects.toThrow(ConfigError);
  });
});
