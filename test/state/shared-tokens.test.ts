/**
 * OAuth tokens for a fleet (issue 16): OAuth state in Redis through `StateTokenStore`, and one refresh at a time.
 * Four processes whose shared access token expired connect at once: the authorization server sees one refresh, the
 * others reuse its token, and nobody signs in again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServerAuth } from '../../src/auth/server-auth.js';
import { StateTokenStore, shareTokenRefresh } from '../../src/auth/token-store.js';
import { MemoryStateStore } from '../../src/state/memory.js';
import { RedisStateStore } from '../../src/state/redis.js';
import { redisForFile, startStateWorker } from '../helpers/redis.js';
import { autoApprove, callText, OAuthClients } from '../remote/oauth-client.js';
import { OAuthFixture } from '../remote/oauth-fixture.js';

const redisServer = redisForFile();

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

const refreshes = (fixture: OAuthFixture) =>
  fixture.log.filter((e) => e.form?.grant_type === 'refresh_token').length;

describe('shared OAuth tokens on Redis', () => {
  it('one token refresh for 4 processes: the others wait for it and reuse the fresh token', async () => {
    const prefix = 'tokens-4:';
    const fixture = await OAuthFixture.start();
    cleanup.push(() => fixture.close());
    const mcpUrl = await fixture.startResource();
    // A pre-registered public client: every process of the fleet uses the same one.
    fixture.register({ client_id: 'fleet', token_endpoint_auth_method: 'none', redirect_uris: [] });
    const store = await RedisStateStore.connect({ url: redisServer.current.url, keyPrefix: prefix });
    cleanup.push(() => store.close());

    // One sign-in, in this process, puts the tokens in Redis.
    const clients = new OAuthClients();
    cleanup.push(() => clients.close());
    const serverAuth = createServerAuth({
      store: new StateTokenStore(store),
      openUrl: async (u) => {
        fixture.clients.get('fleet')?.redirect_uris.push(u.searchParams.get('redirect_uri') ?? '');
        await autoApprove(u);
      },
    });
    const first = await clients.connect(mcpUrl, { type: 'oauth', clientId: 'fleet' }, serverAuth);
    expect(await callText(first, 'whoami')).toContain('scope=mcp:read');
    await clients.close();
    expect(refreshes(fixture)).toBe(0);

    fixture.expireAll();
    const workers = [1, 2, 3, 4].map(() =>
      startStateWorker('token-worker', [redisServer.current.url, prefix, mcpUrl]),
    );
    for (const w of workers) cleanup.push(() => w.kill());
    const called = await Promise.all(workers.map((w) => w.line('called ')));
    await Promise.all(workers.map((w) => w.done));

    expect(called.every((l) => l.includes('scope=mcp:read'))).toBe(true);
    expect(refreshes(fixture)).toBe(1);
    // No process signed in again (that would be a second authorization code).
    expect(fixture.log.filter((e) => e.form?.grant_type === 'authorization_code')).toHaveLength(1);
    // Every process sent the one refreshed token.
    const stored = await new StateTokenStore(store).load(new URL(mcpUrl).origin + new URL(mcpUrl).pathname);
    const fresh = stored?.tokens?.access_token;
    expect(fresh).toMatch(/^at-/);
    const lastSent = fixture.seenByResource.slice(-4);
    expect(lastSent).toEqual(Array(4).fill(`Bearer ${fresh}`));
  });
});

describe('the refresh hook', () => {
  const url = 'https://mcp.example/mcp';
  const key = 'https://mcp.example/mcp';
  const tokenRequest = (refreshToken: string) => ({
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }),
  });

  it('sends a refresh when the stored token is the one refused, and stores the answer before unlocking', async () => {
    const tokens = new StateTokenStore(new MemoryStateStore());
    await tokens.save(key, { tokens: { access_token: 'old', token_type: 'Bearer', refresh_token: 'r1' } });
    let sent = 0;
    const fetch = shareTokenRefresh(
      async (target) => {
        if (String(target).startsWith(url)) return new Response('', { status: 401 });
        sent++;
        return Response.json({ access_token: 'new', token_type: 'Bearer', expires_in: 60 });
      },
      { store: tokens, key, serverUrl: url },
    );
    await fetch(url, { headers: { authorization: 'Bearer old' } });
    const answer = await fetch('https://as.example/token', tokenRequest('r1'));
    expect(await answer.json()).toMatchObject({ access_token: 'new' });
    expect(sent).toBe(1);
    // Kept with the refresh token it was obtained with, since the server rotated none.
    expect((await tokens.load(key))?.tokens).toMatchObject({ access_token: 'new', refresh_token: 'r1' });
  });

  it('answers with the stored tokens when another process refreshed them, and asks the server nothing', async () => {
    const tokens = new StateTokenStore(new MemoryStateStore());
    await tokens.save(key, {
      tokens: { access_token: 'theirs', token_type: 'Bearer', refresh_token: 'r2' },
      expiresAt: Date.now() + 3_600_000,
    });
    const fetch = shareTokenRefresh(
      async () => {
        throw new Error('the authorization server must not be asked');
      },
      { store: tokens, key, serverUrl: url },
    );
    const answer = await fetch('https://as.example/token', tokenRequest('r1'));
    const body = (await answer.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ access_token: 'theirs', refresh_token: 'r2' });
    expect(body.expires_in).toBeGreaterThan(3_500);
  });
});
