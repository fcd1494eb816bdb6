// The throttle on failed authentication (gateway.auth.failedAttempts): an address whose credentials were refused
// `max` times is answered 429 for every credential it sends during `blockMs`, unread; behind trusted proxies the
// address is X-Forwarded-For's; in a fleet the count is the fleet's (a real redis-server). End to end against real
// gateways on loopback with the echo fixture upstream, and the address rules on their own.
import { afterAll, describe, expect, it } from 'vitest';
import { type GatewayConfigInput, GatewayConfigSchema } from '../../src/config/gateway.js';
import { AuthThrottle, CallerAddresses } from '../../src/gateway/auth-throttle.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { RedisStateStore } from '../../src/state/redis.js';
import type { StateStore } from '../../src/state/types.js';
import { nodeFixture } from '../helpers/index.js';
import { rawPost } from '../helpers/raw-call.js';
import { redisForFile } from '../helpers/redis.js';
import { consoleGateway, OPS_KEY, postForm } from './console-helpers.js';

const redis = redisForFile();
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

const limits = { max: 3, windowMs: 60_000, blockMs: 1_500 };

async function gateway(config: Partial<GatewayConfigInput> = {}, store?: StateStore): Promise<URL> {
  const manager = new MCPClientManager({
    capabilities: CapabilitySet.fromPolicy({
      version: 1,
      rules: [{ id: 'echo', effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] }],
    }),
  });
  await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
  const gw = new Gateway({
    manager,
    ...(store === undefined ? {} : { store }),
    config: {
      auth: { apiKeys: [{ key: OPS_KEY, subject: 'ops' }], failedAttempts: limits },
      operators: { apiKey: { subjects: ['ops'] } },
      http: { port: 0 },
      ...config,
    },
  });
  const address = await gw.listen();
  closers.push(
    () => gw.close(),
    () => manager.close(),
  );
  return address.url;
}

/** An MCP `initialize` with this bearer token (none: no Authorization header), from `forwardedFor` if given. */
function call(url: URL, token?: string, forwardedFor?: string): Promise<Response> {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  };
  return rawPost(
    url,
    initialize,
    token,
    forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  );
}

async function statuses(responses: Promise<Response>[]): Promise<number[]> {
  const all = await Promise.all(responses);
  await Promise.all(all.map((r) => r.body?.cancel()));
  return all.map((r) => r.status);
}

describe('refused credentials on the MCP endpoint', () => {
  it('block the address after max refusals: every credential is then 429 unread, until the block ends', async () => {
    const url = await gateway();
    for (let i = 0; i < limits.max; i++) expect((await statuses([call(url, `wrong-${i}`)]))[0]).toBe(401);
    const blocked = await call(url, OPS_KEY);
    expect(blocked.status).toBe(429);
    const retry = Number(blocked.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(2);
    const body = (await blocked.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/Too many refused credentials from this address/);
    // A request without a credential is no guess: refused for what it is, neither counted nor blocked.
    expect(await statuses([call(url)])).toEqual([401]);
    // Asking while blocked is answered 429 and counted for nothing, so the end of the block can be polled for.
    await expect
      .poll(async () => (await statuses([call(url, OPS_KEY)]))[0], { timeout: 10_000, interval: 100 })
      .toBe(200);
  });

  it('count nothing without a credential, and nothing when failedAttempts is false', async () => {
    const quiet = await gateway();
    expect(await statuses(Array.from({ length: 6 }, () => call(quiet)))).toEqual(Array(6).fill(401));
    expect(await statuses([call(quiet, OPS_KEY)])).toEqual([200]);
    const off = await gateway({
      auth: { apiKeys: [{ key: OPS_KEY, subject: 'ops' }], failedAttempts: false },
    });
    expect(await statuses(Array.from({ length: 6 }, (_, i) => call(off, `wrong-${i}`)))).toEqual(
      Array(6).fill(401),
    );
    expect(await statuses([call(off, OPS_KEY)])).toEqual([200]);
  });

  it('count per caller behind a trusted proxy, and ignore X-Forwarded-For from anyone else', async () => {
    const behind = await gateway({ http: { port: 0, trustedProxies: ['127.0.0.1', '::1'] } });
    for (let i = 0; i < limits.max; i++) await statuses([call(behind, `wrong-${i}`, '198.51.100.7')]);
    expect(await statuses([call(behind, OPS_KEY, '198.51.100.7')])).toEqual([429]);
    // Another caller through the same proxy is not blocked, and one who writes the blocked caller's address to
    // the left of its own is still itself.
    expect(await statuses([call(behind, OPS_KEY, '198.51.100.8')])).toEqual([200]);
    expect(await statuses([call(behind, OPS_KEY, '198.51.100.7, 198.51.100.9')])).toEqual([200]);
    // Without trusted proxies the header is the caller's to write: it cannot dodge its own block with it.
    const direct = await gateway();
    for (let i = 0; i < limits.max; i++) await statuses([call(direct, `wrong-${i}`, `203.0.113.${i}`)]);
    expect(await statuses([call(direct, OPS_KEY, '203.0.113.99')])).toEqual([429]);
  });

  it("count the console's refused sign-ins against the same address", async () => {
    const url = await gateway({ console: { path: '/console' } });
    const signin = new URL('/console/signin', url);
    for (let i = 0; i < limits.max; i++)
      expect((await postForm(signin, { credential: `wrong-${i}` })).status).toBe(401);
    const page = await postForm(signin, { credential: OPS_KEY });
    expect(page.status).toBe(429);
    expect(await page.text()).toContain('Too many refused sign-ins from this address');
    // And the MCP endpoint is blocked for that address too.
    expect(await statuses([call(url, OPS_KEY)])).toEqual([429]);
  });
});

describe('the console behind a trusted proxy', () => {
  it('audits a sign-in with the address X-Forwarded-For names, not the proxy', async () => {
    await using gw = await consoleGateway({ http: { port: 0, trustedProxies: ['127.0.0.1', '::1'] } });
    const signin = new URL('signin', `${gw.console.href}/`);
    const response = await fetch(signin, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: signin.origin,
        'x-forwarded-for': '198.51.100.23',
      },
      body: new URLSearchParams({ credential: OPS_KEY }).toString(),
    });
    expect(response.status).toBe(303);
    expect(gw.audit.records).toContainEqual(
      expect.objectContaining({ action: 'sign-in', allowed: true, reason: 'signed in from 198.51.100.23' }),
    );
  });
});

describe('refused credentials in a fleet sharing the store', () => {
  it('block an address after max refusals across the replicas, on every replica at once', async () => {
    const stores = await Promise.all(
      [0, 1].map(() => RedisStateStore.connect({ url: redis.current.url, keyPrefix: 'throttle:' })),
    );
    closers.push(() => Promise.all(stores.map((s) => s.close())));
    const [a, b] = [await gateway({}, stores[0]), await gateway({}, stores[1])];
    expect(await statuses([call(a, 'wrong-1'), call(b, 'wrong-2')])).toEqual([401, 401]);
    // The third refusal is the fleet's third: the replica that took it blocks the address at once ...
    expect(await statuses([call(b, 'wrong-3')])).toEqual([401]);
    expect(await statuses([call(b, OPS_KEY)])).toEqual([429]);
    // ... and tells the other, which refuses the right key unread too, with no fourth guess checked anywhere.
    await expect.poll(async () => (await call(a, OPS_KEY)).status, { timeout: 5_000 }).toBe(429);
    expect(await statuses([call(a, 'wrong-4')])).toEqual([429]);
  });

  it('take a block told on the store for no longer than their own, and ignore a message they cannot read', async () => {
    const [mine, other] = await Promise.all(
      [0, 1].map(() => RedisStateStore.connect({ url: redis.current.url, keyPrefix: 'throttle-told:' })),
    );
    closers.push(async () => Promise.all([mine?.close(), other?.close()]));
    const throttle = new AuthThrottle({ limits, store: mine });
    // A second listener on the same connection hears every message in the same order: once it has one, so would have
    // the first, had it still been listening.
    const witness = new AuthThrottle({ limits, store: mine });
    await throttle.share();
    await witness.share();
    closers.push(
      () => throttle.close(),
      () => witness.close(),
    );
    for (const junk of ['not json', '{"address":"203.0.113.9"}', '{"address":"203.0.113.9","ms":-5}'])
      await other!.publish('auth-blocked', junk);
    await other!.publish('auth-blocked', JSON.stringify({ address: '203.0.113.7', ms: 3_600_000 }));
    await expect.poll(() => throttle.blockedFor('203.0.113.7'), { timeout: 5_000 }).toBeGreaterThan(0);
    expect(throttle.blockedFor('203.0.113.7')).toBeLessThanOrEqual(limits.blockMs);
    expect(throttle.blockedFor('203.0.113.9')).toBe(0);
    // Closed, it hears no more.
    await throttle.close();
    await other!.publish('auth-blocked', JSON.stringify({ address: '203.0.113.8', ms: 1_000 }));
    await expect.poll(() => witness.blockedFor('203.0.113.8'), { timeout: 5_000 }).toBeGreaterThan(0);
    expect(throttle.blockedFor('203.0.113.8')).toBe(0);
  });
});

describe('the address a refusal counts against', () => {
  const peer = (remoteAddress: string, ...rawHeaders: string[]) => ({
    rawHeaders,
    socket: { remoteAddress },
  });

  it("is the peer's, IPv4-mapped IPv6 as IPv4, and X-Forwarded-For only from a trusted proxy", () => {
    const addresses = new CallerAddresses(['10.0.0.0/8', '127.0.0.1', 'fd00::/8']);
    expect(addresses.of(peer('203.0.113.5', 'X-Forwarded-For', '198.51.100.7'))).toBe('203.0.113.5');
    expect(addresses.of(peer('::ffff:203.0.113.5'))).toBe('203.0.113.5');
    expect(addresses.of(peer('::ffff:127.0.0.1', 'X-Forwarded-For', '198.51.100.7'))).toBe('198.51.100.7');
    // The rightmost address that is not a trusted proxy: what a caller writes to its left is not believed.
    expect(addresses.of(peer('127.0.0.1', 'x-forwarded-for', '1.2.3.4, 198.51.100.7, 10.2.3.4'))).toBe(
      '198.51.100.7',
    );
    // Several headers are one list, in order; ports and brackets are taken off.
    expect(
      addresses.of(peer('10.0.0.1', 'X-Forwarded-For', '198.51.100.7:4711', 'X-Forwarded-For', '10.9.9.9')),
    ).toBe('198.51.100.7');
    expect(addresses.of(peer('fd00::1', 'X-Forwarded-For', '[2001:db8::7]:443'))).toBe('2001:db8::7');
    // An entry that is no address stops at the proxy that added it.
    expect(addresses.of(peer('127.0.0.1', 'X-Forwarded-For', '198.51.100.7, unknown'))).toBe('127.0.0.1');
    // Only trusted proxies all the way: the leftmost of them.
    expect(addresses.of(peer('127.0.0.1', 'X-Forwarded-For', '10.1.1.1'))).toBe('10.1.1.1');
  });

  it('counts an IPv6 address by its /64, forgets blocks when they end, and keeps a bounded table', async () => {
    let now = 1_000_000;
    const blocked: string[] = [];
    const throttle = new AuthThrottle({
      limits,
      maxAddresses: 3,
      now: () => now,
      onBlocked: (address) => blocked.push(address),
    });
    await throttle.failed('2001:db8:1:2::a');
    await throttle.failed('2001:db8:1:2:ffff::b');
    await throttle.failed('2001:0db8:0001:0002::c');
    expect(throttle.blockedFor('2001:db8:1:2::99')).toBe(limits.blockMs);
    expect(throttle.blockedFor('2001:db8:1:3::a')).toBe(0);
    expect(blocked).toEqual(['2001:db8:1:2::/64']);
    now += limits.blockMs;
    expect(throttle.blockedFor('2001:db8:1:2::a')).toBe(0);
    // A full table (3 addresses) forgets first an address out of its window, then the one counted longest ago.
    now += limits.windowMs;
    await throttle.failed('192.0.2.1');
    await throttle.failed('192.0.2.1');
    for (const address of ['192.0.2.2', '192.0.2.3', '192.0.2.4']) await throttle.failed(address);
    // 192.0.2.1 was forgotten to make room: its third refusal is its first again, and does not block it.
    await throttle.failed('192.0.2.1');
    expect(throttle.blockedFor('192.0.2.1')).toBe(0);
    // An address still in the table is counted on.
    await throttle.failed('192.0.2.4');
    await throttle.failed('192.0.2.4');
    expect(throttle.blockedFor('192.0.2.4')).toBe(limits.blockMs);
    // Refusals from ever more addresses fill the table, but never free a blocked address.
    for (let i = 10; i < 20; i++) await throttle.failed(`192.0.2.${i}`);
    expect(throttle.blockedFor('192.0.2.4')).toBe(limits.blockMs);
  });

  it('is configured with addresses and CIDR ranges, and a bad one says what to write', () => {
    const parsed = GatewayConfigSchema.safeParse({ http: { trustedProxies: ['10.0.0.0/33'] } });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain('write an IP address or a CIDR range');
    const ok = GatewayConfigSchema.parse({
      auth: { apiKeys: [{ key: OPS_KEY, subject: 'ops' }] },
      http: { trustedProxies: ['10.0.0.0/8', '2001:db8::/32', '192.0.2.7'] },
    });
    expect(ok.auth?.failedAttempts).toEqual({ max: 10, windowMs: 60_000, blockMs: 300_000 });
  });
});
