// The gateway's operator console over HTTP (issue 41): sign-in with the gateway's own credential and the operator
// role, server-side sessions, CSRF tokens and Origin checks on every change, the Content-Security-Policy on every
// page and no inline code in any, the panels' data, and where the console may be served at all.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import {
  ALICE_KEY,
  BOB_KEY,
  type ConsoleGateway,
  consoleGateway,
  csrfOf,
  getPage,
  inlineCode,
  OPS_KEY,
  postForm,
  rawGet,
  sessionCookie,
  signIn,
} from './console-helpers.js';

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const PANELS = ['servers', 'tools', 'live', 'blocked', 'policy', 'quota'];

let g: ConsoleGateway;
let base: string;

beforeAll(async () => {
  g = await consoleGateway();
  base = g.console.href;
});

afterAll(async () => {
  await g?.[Symbol.asyncDispose]();
});

async function client(key: string) {
  const c = new Client({ name: 'console-test', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await c.connect(
    new StreamableHTTPClientTransport(g.url, {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return c;
}

describe('signing in to the console', () => {
  it('sends a browser without a session to the sign-in page, and refuses its live stream', async () => {
    const page = await getPage(`${base}/servers`);
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/console/signin');
    expect((await getPage(`${base}/live/events`)).status).toBe(401);
    const signin = await getPage(`${base}/signin`);
    expect(signin.status).toBe(200);
    expect(await signin.text()).toContain('name="credential"');
  });

  it('refuses an unknown credential, and a valid one that is not an operator’s', async () => {
    const unknown = await postForm(`${base}/signin`, { credential: 'not-a-key-0123456789abcdef' });
    expect(unknown.status).toBe(401);
    expect(unknown.headers.getSetCookie()).toEqual([]);
    const alice = await postForm(`${base}/signin`, { credential: ALICE_KEY });
    expect(alice.status).toBe(403);
    expect(await alice.text()).toContain('not an operator');
    expect(alice.headers.getSetCookie()).toEqual([]);
  });

  it('gives an operator an HttpOnly, SameSite=Strict session cookie with a random id, and audits the sign-in', async () => {
    const response = await postForm(`${base}/signin`, { credential: OPS_KEY });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/console/servers');
    const [cookie] = response.headers.getSetCookie();
    expect(cookie).toMatch(
      /^interlock-console=[A-Za-z0-9_-]{43}; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=\d+$/,
    );
    // Plain HTTP: no Secure attribute (a browser would drop the cookie), and so no __Host- prefix.
    expect(cookie).not.toContain('Secure');
    const again = sessionCookie(await postForm(`${base}/signin`, { credential: OPS_KEY }));
    expect(again).not.toBe(sessionCookie(response));
    const page = await getPage(`${base}/servers`, sessionCookie(response));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Signed in as <strong>ops</strong>');
    expect(g.audit.records).toContainEqual(
      expect.objectContaining({ agent: 'console', action: 'sign-in', principal: 'ops', allowed: true }),
    );
    expect(g.audit.records).toContainEqual(
      expect.objectContaining({ agent: 'console', action: 'sign-in', principal: 'alice', allowed: false }),
    );
  });

  it('refuses a sign-in form without an Origin or from another origin', async () => {
    expect((await postForm(`${base}/signin`, { credential: OPS_KEY }, { origin: null })).status).toBe(403);
    expect(
      (await postForm(`${base}/signin`, { credential: OPS_KEY }, { origin: 'https://evil.example' })).status,
    ).toBe(403);
  });

  it('ends the session on sign-out (a POST with the CSRF token)', async () => {
    const cookie = await signIn(g.console, OPS_KEY);
    const csrf = csrfOf(await (await getPage(`${base}/servers`, cookie)).text());
    const out = await postForm(`${base}/signout`, { _csrf: csrf }, { cookie });
    expect(out.status).toBe(303);
    expect(out.headers.getSetCookie()[0]).toContain('Max-Age=0');
    expect((await getPage(`${base}/servers`, cookie)).status).toBe(303);
  });
});

describe('every console page', () => {
  it('carries the CSP and the other security headers, and has no inline script or style', async () => {
    const cookie = await signIn(g.console, OPS_KEY);
    for (const panel of [...PANELS, 'signin']) {
      const response = await getPage(`${base}/${panel}`, panel === 'signin' ? undefined : cookie);
      expect(response.status, panel).toBe(200);
      expect(response.headers.get('content-security-policy'), panel).toBe(CSP);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('referrer-policy')).toBe('same-origin');
      expect(response.headers.get('cache-control')).toBe('no-store');
      const html = await response.text();
      expect(inlineCode(html), panel).toEqual([]);
      expect(html).toContain('<meta name="htmx-config"');
    }
  });

  it('serves htmx and its SSE extension from the package, not a CDN', async () => {
    const page = await (await getPage(`${base}/signin`)).text();
    expect(page).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/);
    for (const asset of ['htmx.min.js', 'sse.min.js', 'console.js', 'console.css']) {
      const response = await getPage(`${base}/assets/${asset}`);
      expect(response.status, asset).toBe(200);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect((await response.text()).length).toBeGreaterThan(100);
    }
    expect(await (await getPage(`${base}/assets/htmx.min.js`)).text()).toContain('htmx');
    expect((await getPage(`${base}/assets/../../package.json`)).status).not.toBe(200);
  });

  it('answers the MCP endpoint and /metrics as before', async () => {
    expect((await getPage(new URL('/metrics', g.url))).status).toBe(401);
    const c = await client(BOB_KEY);
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual(['mcp__echo__echo']);
    await c.close();
  });
});

describe('changing something from the console', () => {
  it('refuses a POST without the CSRF token, with a wrong one, or from a foreign Origin, and changes nothing', async () => {
    const cookie = await signIn(g.console, OPS_KEY);
    const csrf = csrfOf(await (await getPage(`${base}/servers`, cookie)).text());
    const approve = `${base}/blocked/approve`;
    const fields = { name: 'mcp__echo__echo', hash: 'a'.repeat(64) };
    expect((await postForm(approve, fields, { cookie })).status).toBe(403);
    expect((await postForm(approve, { ...fields, _csrf: `${csrf.slice(1)}x` }, { cookie })).status).toBe(403);
    expect(
      (await postForm(approve, { ...fields, _csrf: csrf }, { cookie, origin: 'http://evil.example' })).status,
    ).toBe(403);
    expect((await postForm(approve, { ...fields, _csrf: csrf }, { cookie, origin: null })).status).toBe(403);
    // Another session's token is not this session's.
    const other = await signIn(g.console, OPS_KEY);
    const otherCsrf = csrfOf(await (await getPage(`${base}/servers`, other)).text());
    expect((await postForm(approve, { ...fields, _csrf: otherCsrf }, { cookie })).status).toBe(403);
    expect(g.audit.records.filter((r) => r.action === 'approve-tool-change')).toEqual([]);
    // With the token it is an action: here there is nothing to approve, which the panel says.
    const done = await postForm(approve, { ...fields, _csrf: csrf }, { cookie });
    expect(done.status).toBe(303);
    expect(await (await getPage(`${base}/blocked`, cookie)).text()).toContain('was not approved');
  });

  it('approves a changed tool only with the hash that was reviewed, and audits who did it from where', async () => {
    const alice = await client(ALICE_KEY);
    await alice.callTool({
      name: 'mcp__echo__set_description',
      arguments: { tool: 'add', description: 'Adds, and mails the sum to evil.example.' },
    });
    await expect.poll(() => g.manager.blockedTools.map((b) => b.name)).toEqual(['mcp__echo__add']);
    const cookie = await signIn(g.console, OPS_KEY);
    const page = await (await getPage(`${base}/blocked`, cookie)).text();
    expect(page).toContain('evil.example');
    const reviewed = g.manager.blockedTools[0]?.currentHash as string;
    expect(page).toContain(`value="${reviewed}"`);
    const csrf = csrfOf(page);
    // The definition changes again after the review: the reviewed hash approves nothing.
    await alice.callTool({
      name: 'mcp__echo__set_description',
      arguments: { tool: 'add', description: 'Adds, and now mails everything to evil.example.' },
    });
    await expect.poll(() => g.manager.blockedTools[0]?.currentHash).not.toBe(reviewed);
    await postForm(
      `${base}/blocked/approve`,
      { name: 'mcp__echo__add', hash: reviewed, _csrf: csrf },
      { cookie },
    );
    expect(g.manager.blockedTools.map((b) => b.name)).toEqual(['mcp__echo__add']);
    const current = g.manager.blockedTools[0]?.currentHash as string;
    const ok = await postForm(
      `${base}/blocked/approve`,
      { name: 'mcp__echo__add', hash: current, _csrf: csrf },
      { cookie },
    );
    expect(ok.status).toBe(303);
    expect(g.manager.blockedTools).toEqual([]);
    expect(await (await getPage(`${base}/blocked`, cookie)).text()).toContain('Approved mcp__echo__add');
    const result = await alice.callTool({ name: 'mcp__echo__add', arguments: { a: 2, b: 3 } });
    expect(result.isError).toBeFalsy();
    await alice.close();
    expect(g.audit.records).toContainEqual(
      expect.objectContaining({
        agent: 'console',
        action: 'approve-tool-change',
        principal: 'ops',
        resource: 'mcp:echo:add',
        allowed: true,
        reason: expect.stringMatching(/^approved definition [0-9a-f]{12} from (::ffff:)?127\.0\.0\.1$/),
      }),
    );
  });
});

describe('the panels', () => {
  it('shows the servers and their health', async () => {
    const cookie = await signIn(g.console, OPS_KEY);
    const html = await (await getPage(`${base}/servers`, cookie)).text();
    expect(html).toMatch(/<th scope="row">echo<\/th><td>ready<\/td>/);
  });

  it("shows a principal's tools with the deciding rule", async () => {
    const cookie = await signIn(g.console, OPS_KEY);
    const html = await (await getPage(`${base}/tools?method=apiKey&subject=bob&groups=`, cookie)).text();
    expect(html).toContain('matches binding 1');
    expect(html).toMatch(
      /<code>mcp__echo__echo<\/code><\/th><td class="effect-allow">allow<\/td><td>bob-echo<\/td>/,
    );
    expect(html).toMatch(
      /<code>mcp__echo__add<\/code><\/th><td class="effect-default-deny">default-deny<\/td>/,
    );
    const dev = await (await getPage(`${base}/tools?method=apiKey&subject=dana&groups=dev`, cookie)).text();
    expect(dev).toMatch(
      /<code>mcp__echo__add<\/code><\/th><td class="effect-allow">allow<\/td><td>dev-add<\/td>/,
    );
  });

  it('shows denials in the live view, filtered by principal, tool and rule', async () => {
    const bob = await client(BOB_KEY);
    // A tool hidden from bob answers as unknown; the operator still sees the denial.
    await expect(bob.callTool({ name: 'mcp__echo__add', arguments: { a: 1, b: 2 } })).rejects.toThrow(
      /Unknown tool/,
    );
    await bob.callTool({ name: 'mcp__echo__echo', arguments: { text: 'hi' } });
    await bob.close();
    const cookie = await signIn(g.console, OPS_KEY);
    const bobs = await (await getPage(`${base}/live?principal=bob`, cookie)).text();
    expect(bobs).toMatch(
      /<td>bob<\/td><td><code>mcp__echo__add<\/code><\/td><td>execute<\/td><td class="effect-default-deny">denied/,
    );
    expect(bobs).not.toContain('<td>alice</td>');
    const rule = await (await getPage(`${base}/live?rule=bob-echo`, cookie)).text();
    expect(rule).toContain('<code>mcp__echo__echo</code>');
    expect(rule).not.toContain('<code>mcp__echo__add</code>');
    const tool = await (await getPage(`${base}/live?tool=mcp__echo__add&principal=bob`, cookie)).text();
    expect(tool).not.toContain('<code>mcp__echo__echo</code>');
  });

  it('streams new decisions to the live view as server-sent events, filtered', async () => {
    const cookie = await signIn(g.console, OPS_KEY);
    const abort = new AbortController();
    const stream = await fetch(`${base}/live/events?principal=bob`, {
      headers: { cookie },
      signal: abort.signal,
    });
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    const alice = await client(ALICE_KEY);
    await alice.callTool({ name: 'mcp__echo__echo', arguments: { text: 'alice' } });
    await alice.close();
    const bob = await client(BOB_KEY);
    await bob.callTool({ name: 'mcp__echo__add', arguments: { a: 1, b: 1 } }).catch(() => undefined);
    await bob.close();
    let text = '';
    while (!text.includes('event: decision')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    abort.abort();
    expect(text).toMatch(
      /event: decision\nid: \d+\ndata: <tr><td>[^<]+<\/td><td>bob<\/td><td><code>mcp__echo__add/,
    );
    expect(text).not.toContain('alice');
  });

  it('says when the gateway shares no policy, and shows quota use of the rules with maxCalls', async () => {
    const cookie = await signIn(g.console, OPS_KEY);
    expect(await (await getPage(`${base}/policy`, cookie)).text()).toContain('This gateway shares no policy');
    const alice = await client(ALICE_KEY);
    await alice.callTool({ name: 'mcp__echo__add', arguments: { a: 1, b: 1 } });
    await alice.close();
    const quota = await (await getPage(`${base}/quota`, cookie)).text();
    expect(quota).toMatch(
      /<td>alice \(api-key\), binding 0<\/td><td>dev-add<\/td><td>[1-9]\d*<\/td><td>5<\/td>/,
    );
  });
});

describe('where the console may be served', () => {
  async function gatewayWith(config: Record<string, unknown>) {
    const manager = new MCPClientManager({ capabilities: new CapabilitySet() });
    const gateway = new Gateway({ manager, config: { http: { port: 0 }, ...config } });
    return { gateway, manager };
  }

  it('is off unless configured', async () => {
    const { gateway, manager } = await gatewayWith({});
    const address = await gateway.listen();
    expect(address.console).toBeUndefined();
    expect((await fetch(new URL('/console/servers', address.url))).status).toBe(404);
    await gateway.close();
    await manager.close();
  });

  it('serves a loopback gateway without auth with no sign-in, and still checks CSRF', async () => {
    const { gateway, manager } = await gatewayWith({ console: { path: '/ops' } });
    const address = await gateway.listen();
    const page = await getPage(new URL('/ops/servers', address.url));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('asks nobody to sign in');
    const cookie = sessionCookie(page);
    expect(
      (
        await postForm(
          new URL('/ops/blocked/approve', address.url),
          { name: 'x', hash: 'a'.repeat(12) },
          { cookie },
        )
      ).status,
    ).toBe(403);
    expect(
      (
        await postForm(
          new URL('/ops/blocked/approve', address.url),
          { name: 'x', hash: 'a'.repeat(12), _csrf: csrfOf(html) },
          { cookie },
        )
      ).status,
    ).toBe(303);
    await gateway.close();
    await manager.close();
  });

  it('refuses a console off loopback without auth, and a console of an authenticating gateway without operators', async () => {
    const open = await gatewayWith({ console: { listen: { host: '0.0.0.0', port: 0 } } });
    await expect(open.gateway.listen()).rejects.toThrow(ConfigError);
    await expect(open.gateway.listen().catch((e: Error) => e.message)).resolves.toMatch(
      /not on a loopback address/,
    );
    await open.gateway.close();
    await open.manager.close();
    const noOperators = await gatewayWith({
      auth: { apiKeys: [{ key: OPS_KEY, subject: 'ops' }] },
      console: { path: '/console' },
    });
    await expect(noOperators.gateway.listen()).rejects.toThrow(/needs gateway.operators/);
    await noOperators.gateway.close();
    await noOperators.manager.close();
  });

  it('refuses a section with both or neither of path and listen', () => {
    const manager = new MCPClientManager({ capabilities: new CapabilitySet() });
    expect(() => new Gateway({ manager, config: { console: {} } })).toThrow(ConfigError);
    expect(() => new Gateway({ manager, config: { console: { path: '/c', listen: { port: 0 } } } })).toThrow(
      ConfigError,
    );
  });

  it('serves on a listener of its own, screened for Host, with the same sign-in', async () => {
    await using own = await consoleGateway({ console: { listen: { host: '127.0.0.1', port: 0 } } });
    expect(own.console.port).not.toBe(own.url.port);
    expect((await getPage(new URL('/console/servers', own.url))).status).toBe(404);
    const cookie = await signIn(own.console, OPS_KEY);
    expect((await getPage(new URL('/servers', own.console), cookie)).status).toBe(200);
    expect(await rawGet(new URL('/servers', own.console), { host: 'evil.example', cookie })).toBe(403);
  });
});
