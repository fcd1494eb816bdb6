/**
 * `interlock login`, `login --status` and `logout` as real processes against the real loopback OAuth fixture:
 * client credentials, the authorization code through a `BROWSER` command (a node script that follows the sign-in
 * URL to the loopback receiver), revocation observed at a revocation endpoint in front of the fixture, and the
 * usage errors. No token, secret or code is ever printed, and no process outlives the CLI.
 */
import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fixture as fixtureServer } from '../helpers/fixtures.js';
import { OAuthFixture } from '../remote/oauth-fixture.js';
import { allGone, type CliResult, json, runCli, startCli, type TempProject, tempProject } from './helpers.js';
import { RevocationFixture } from './revocation-fixture.js';

const SVC_SECRET = 'login-s3cret-value';

let project: TempProject | undefined;
let oauth: OAuthFixture | undefined;
let revocation: RevocationFixture | undefined;
const results: CliResult[] = [];

afterEach(async () => {
  const pids = results.splice(0).flatMap((r) => r.descendants);
  await revocation?.close();
  revocation = undefined;
  await oauth?.close();
  oauth = undefined;
  project?.close();
  project = undefined;
  // No process the CLI started (the BROWSER command included) outlives it.
  expect(await allGone(pids)).toEqual([]);
});

async function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  if (project === undefined) throw new Error('no project');
  const result = await runCli(args, { cwd: project.dir, env: { SVC_SECRET, ...env } });
  results.push(result);
  return result;
}

/** A `BROWSER` command: a node script that GETs the URL it is given, following redirects to the receiver. */
function browserScript(p: TempProject): { BROWSER: string; BROWSER_LOG: string } {
  const path = p.write(
    'browser.mjs',
    `#!${process.execPath}
import { appendFileSync } from 'node:fs';
appendFileSync(process.env.BROWSER_LOG, JSON.stringify(process.argv.slice(2)) + '\\n');
const res = await fetch(process.argv[2]);
await res.text();
process.exitCode = res.ok ? 0 : 1;
`,
  );
  chmodSync(path, 0o755);
  return { BROWSER: path, BROWSER_LOG: join(p.dir, 'browser-log.jsonl') };
}

function browserRuns(env: { BROWSER_LOG: string }): string[][] {
  if (!existsSync(env.BROWSER_LOG)) return [];
  return readFileSync(env.BROWSER_LOG, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as string[]);
}

/** Every token and authorization code the fixture handed out so far. */
function issued(f: OAuthFixture): string[] {
  const codes = f.log.flatMap((e) => (e.form?.code === undefined ? [] : [e.form.code]));
  return [...f.tokens.keys(), ...f.refreshTokens.keys(), ...codes];
}

function expectNoSecrets(result: CliResult, secrets: readonly string[]): void {
  const printed = `${result.stdout}${result.stderr}`;
  for (const secret of [SVC_SECRET, ...secrets]) expect(printed).not.toContain(secret);
}

const tokensPath = () => join(project?.dir ?? '', '.interlock', 'tokens.json');
const storedKeys = () =>
  existsSync(tokensPath()) ? Object.keys(JSON.parse(readFileSync(tokensPath(), 'utf8')) as object) : [];

/** A confidential client for client credentials, pre-registered at the fixture. */
function registerService(f: OAuthFixture, method: 'client_secret_basic' | 'client_secret_post'): object {
  f.register({
    client_id: 'svc',
    client_secret: SVC_SECRET,
    token_endpoint_auth_method: method,
    redirect_uris: [],
  });
  return {
    type: 'oauth',
    grant: 'client_credentials',
    clientId: 'svc',
    clientSecret: '${SVC_SECRET}',
    tokenEndpointAuthMethod: method,
  };
}

function writeProject(servers: Record<string, object>, extra: object = {}): void {
  project ??= tempProject();
  project.write('interlock.config.yaml', {
    ...extra,
    mcpServers: servers,
    policy: { version: 1, rules: [{ effect: 'allow', resource: 'mcp:remote:whoami', actions: 'execute' }] },
  });
}

describe('interlock login', () => {
  it('signs in with client credentials, prints the scope and expiry, and keeps the tokens in a 0600 file', async () => {
    oauth = await OAuthFixture.start();
    const url = await oauth.startResource();
    writeProject({ remote: { type: 'http', url, auth: registerService(oauth, 'client_secret_post') } });

    const first = await cli(['login']);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^signed in to remote \(scopes: mcp:read; expires in (59|60) min\)$/m);
    expect(statSync(tokensPath()).mode & 0o777).toBe(0o600);

    const again = await cli(['login', 'remote']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^already signed in to remote \(scopes: mcp:read/m);

    const forced = await cli(['login', '--force', '--json']);
    expect(forced.code).toBe(0);
    expect(json(forced)).toEqual({
      file: tokensPath(),
      servers: [
        {
          name: 'remote',
          signedIn: true,
          alreadySignedIn: false,
          scope: 'mcp:read',
          expiresAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        },
      ],
    });
    expect(oauth.log.filter((e) => e.form?.grant_type === 'client_credentials')).toHaveLength(2);
    for (const r of [first, again, forced]) expectNoSecrets(r, issued(oauth));
  });

  it('signs in with the authorization code through the BROWSER command, a real process', async () => {
    oauth = await OAuthFixture.start();
    const url = await oauth.startResource();
    writeProject({ remote: { type: 'http', url, auth: { type: 'oauth' } } });
    const browser = browserScript(project as TempProject);

    const result = await cli(['login'], browser);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^signed in to remote \(scopes: mcp:read; expires in (59|60) min\)$/m);
    expect(result.stderr).toMatch(/Open this URL to sign in: http:\/\/127\.0\.0\.1:\d+\/authorize\?/);
    // The command ran once, with the sign-in URL as its one argument.
    const runs = browserRuns(browser);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toHaveLength(1);
    expect(new URL(runs[0]?.[0] ?? '').pathname).toBe('/authorize');
    expect(oauth.log.some((e) => e.form?.grant_type === 'authorization_code')).toBe(true);
    expectNoSecrets(result, issued(oauth));

    // Stored: a second login needs no browser.
    const again = await cli(['login'], browser);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^already signed in to remote/m);
    expect(browserRuns(browser)).toHaveLength(1);
  });

  it('exits 1 with the reason when a server refuses the sign-in, and prints no secret', async () => {
    oauth = await OAuthFixture.start();
    const url = await oauth.startResource();
    writeProject({ remote: { type: 'http', url, auth: registerService(oauth, 'client_secret_post') } });
    oauth.register({
      client_id: 'svc',
      client_secret: 'another-secret',
      token_endpoint_auth_method: 'client_secret_post',
      redirect_uris: [],
    });

    const text = await cli(['login']);
    expect(text.code).toBe(1);
    expect(text.stderr).toMatch(/error: could not sign in to remote: .*\S/);
    expectNoSecrets(text, ['another-secret']);
    const data = await cli(['login', '--json']);
    expect(data.code).toBe(1);
    expect(json(data)).toMatchObject({
      servers: [{ name: 'remote', signedIn: false, error: { message: expect.any(String) } }],
    });
    expect(storedKeys().length === 0 || !readFileSync(tokensPath(), 'utf8').includes('access_token')).toBe(
      true,
    );
  });
});

describe('interlock login, interrupted', () => {
  it('stops on Ctrl-C while it waits for the browser sign-in, exit 130, no process left', async () => {
    oauth = await OAuthFixture.start();
    const url = await oauth.startResource();
    writeProject({ remote: { type: 'http', url, auth: { type: 'oauth' } } });
    const p = project as TempProject;
    // A browser that opens nothing: the sign-in never comes back.
    const idle = p.write('idle-browser.mjs', `#!${process.execPath}\n`);
    chmodSync(idle, 0o755);
    const running = startCli(['login'], { cwd: p.dir, env: { BROWSER: idle } });
    await running.waitFor(/Open this URL to sign in: /);
    running.child.kill('SIGINT');
    const result = await running.done;
    results.push(result);
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('interrupted');
    expect(result.stdout).toBe('');
  });
});

describe('interlock login --status', () => {
  it('lists every server with auth, signed in or not, with scope and expiry, without contacting anything', async () => {
    oauth = await OAuthFixture.start();
    const url = await oauth.startResource();
    writeProject({
      remote: { type: 'http', url, auth: registerService(oauth, 'client_secret_basic') },
      other: { type: 'http', url: await oauth.startResource(), auth: { type: 'oauth' }, disabled: true },
      echo: { command: process.execPath, args: [fixtureServer('echo')] },
    });

    const before = await cli(['login', '--status', '--json']);
    expect(before.code).toBe(0);
    expect(json(before)).toMatchObject({
      servers: [
        { name: 'remote', signedIn: false, scope: null, expiresAt: null },
        { name: 'other', enabled: false, signedIn: false },
      ],
    });
    expect(await cli(['login', 'remote'])).toMatchObject({ code: 0 });
    const requests = oauth.log.length;
    const seen = oauth.seenByResource.length;

    const table = await cli(['login', '--status']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/SERVER\s+GRANT\s+SIGNED IN\s+SCOPE\s+EXPIRES\s+REFRESH/);
    expect(table.stdout).toMatch(/remote\s+client_credentials\s+yes\s+mcp:read\s+in (59|60) min\s+no/);
    expect(table.stdout).toMatch(/other \(disabled\)\s+authorization_code\s+no\s+-\s+-\s+-/);
    expect(table.stdout).not.toMatch(/^echo/m);
    expect(table.stdout).toContain(`Token file: ${tokensPath()}`);
    const data = await cli(['login', '--status', 'remote', '--json']);
    expect(json(data)).toEqual({
      file: tokensPath(),
      servers: [
        {
          name: 'remote',
          url,
          grant: 'client_credentials',
          enabled: true,
          signedIn: true,
          scope: 'mcp:read',
          expiresAt: expect.stringMatching(/^\d{4}-/),
          expired: false,
          refreshable: false,
        },
      ],
    });
    // Nothing was contacted.
    expect(oauth.log.length).toBe(requests);
    expect(oauth.seenByResource.length).toBe(seen);
    for (const r of [table, data]) expectNoSecrets(r, issued(oauth));
  }, 90_000);
});

/** An OAuth fixture with a revocation endpoint, a project naming its server, and a first sign-in. */
async function signedIn(options: { failWith?: number } = {}) {
  const server = await OAuthFixture.start();
  oauth = server;
  const revoking = await RevocationFixture.wrap(server, options);
  revocation = revoking;
  const url = await server.startResource();
  writeProject({ remote: { type: 'http', url, auth: { type: 'oauth' } } });
  const browser = browserScript(project as TempProject);
  expect(await cli(['login'], browser)).toMatchObject({ code: 0 });
  return { browser, server, revoking };
}

describe('interlock login --force', () => {
  it('revokes the old tokens at the revocation endpoint before signing in anew with the same client', async () => {
    const { browser, server, revoking } = await signedIn();
    const [oldAccess] = [...server.tokens.keys()];
    const [oldRefresh] = [...server.refreshTokens.keys()];
    const clientsBefore = server.clients.size;

    const forced = await cli(['login', '--force'], browser);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(/^signed in to remote/);
    expect(revoking.revocations.map((r) => [r.hint, r.token, r.revoked])).toEqual([
      ['refresh_token', oldRefresh, true],
      ['access_token', oldAccess, true],
    ]);
    // The old tokens are dead at the server, a new pair is live, and no second client was registered.
    expect(server.tokens.has(oldAccess as string)).toBe(false);
    expect(server.tokens.size).toBe(1);
    expect(server.clients.size).toBe(clientsBefore);
    expectNoSecrets(forced, issued(server));
  });

  it('warns when the old tokens cannot be revoked, and signs in anew all the same', async () => {
    const { browser } = await signedIn({ failWith: 503 });
    const forced = await cli(['login', '--force'], browser);
    expect(forced.code).toBe(0);
    expect(forced.stderr).toMatch(/could not revoke the old refresh token of remote at .*\/revoke \(/);
    expect(forced.stdout).toMatch(/^signed in to remote/);
  });
});

describe('interlock logout', () => {
  it('revokes the refresh token, then the access token, at the revocation endpoint and forgets them', async () => {
    oauth = await OAuthFixture.start();
    revocation = await RevocationFixture.wrap(oauth);
    const url = await oauth.startResource();
    writeProject({ remote: { type: 'http', url, auth: { type: 'oauth' } } });
    const browser = browserScript(project as TempProject);
    expect(await cli(['login'], browser)).toMatchObject({ code: 0 });
    const accessTokens = [...oauth.tokens.keys()];
    const refreshTokens = [...oauth.refreshTokens.keys()];
    expect(accessTokens).toHaveLength(1);
    expect(refreshTokens).toHaveLength(1);
    const secrets = issued(oauth);

    const result = await cli(['logout']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      `signed out of remote: revoked the refresh token and access token at ${revocation.url}/revoke, removed the stored sign-in\n`,
    );
    expect(revocation.revocations).toEqual([
      {
        token: refreshTokens[0],
        hint: 'refresh_token',
        clientId: expect.stringMatching(/^dyn-/),
        via: 'none',
        revoked: true,
      },
      {
        token: accessTokens[0],
        hint: 'access_token',
        clientId: expect.stringMatching(/^dyn-/),
        via: 'none',
        revoked: true,
      },
    ]);
    expect(oauth.tokens.size + oauth.refreshTokens.size).toBe(0);
    expect(storedKeys()).toEqual([]);
    expectNoSecrets(result, secrets);

    const status = await cli(['login', '--status', '--json']);
    expect(json(status)).toMatchObject({ servers: [{ name: 'remote', signedIn: false }] });
    const again = await cli(['logout', 'remote']);
    expect(again.stdout).toBe('not signed in to remote: nothing stored\n');
    expect(revocation.revocations).toHaveLength(2);
  });

  it('authenticates a confidential client at the revocation endpoint as at the token endpoint', async () => {
    oauth = await OAuthFixture.start();
    revocation = await RevocationFixture.wrap(oauth);
    const url = await oauth.startResource();
    writeProject({ remote: { type: 'http', url, auth: registerService(oauth, 'client_secret_basic') } });
    expect(await cli(['login'])).toMatchObject({ code: 0 });
    const secrets = issued(oauth);

    const result = await cli(['logout', '--json']);
    expect(result.code).toBe(0);
    expect(json(result)).toEqual({
      file: tokensPath(),
      servers: [
        {
          name: 'remote',
          removed: true,
          revocationEndpoint: `${revocation.url}/revoke`,
          hadTokens: true,
          revoked: ['access_token'],
          failed: [],
        },
      ],
    });
    expect(revocation.revocations).toMatchObject([
      { hint: 'access_token', clientId: 'svc', via: 'basic', revoked: true },
    ]);
    expectNoSecrets(result, secrets);
  });

  it('warns when the revocation fails and still removes the stored sign-in', async () => {
    oauth = await OAuthFixture.start();
    revocation = await RevocationFixture.wrap(oauth, { failWith: 503 });
    const url = await oauth.startResource();
    writeProject({ remote: { type: 'http', url, auth: registerService(oauth, 'client_secret_post') } });
    expect(await cli(['login'])).toMatchObject({ code: 0 });

    const result = await cli(['logout']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      `warning: could not revoke the access token of remote at ${revocation.url}/revoke (HTTP 503 temporarily_unavailable)`,
    );
    expect(result.stdout).toMatch(/^signed out of remote: removed the stored sign-in \(see the warnings/);
    expect(storedKeys()).toEqual([]);
    expect(oauth.tokens.size).toBe(1);
    expectNoSecrets(result, issued(oauth));
  });

  it('removes the stored sign-in without network access to the authorization server', async () => {
    oauth = await OAuthFixture.start();
    revocation = await RevocationFixture.wrap(oauth);
    const url = await oauth.startResource();
    writeProject({ remote: { type: 'http', url, auth: registerService(oauth, 'client_secret_post') } });
    expect(await cli(['login'])).toMatchObject({ code: 0 });
    await revocation.close();
    await oauth.close();

    const result = await cli(['logout']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /warning: could not revoke the access token of remote at .*\(ECONNREFUSED\)/,
    );
    expect(result.stdout).toMatch(/^signed out of remote: removed the stored sign-in/);
    expect(storedKeys()).toEqual([]);
  });

  it("sends revocation requests through the project's network policy", async () => {
    oauth = await OAuthFixture.start();
    revocation = await RevocationFixture.wrap(oauth);
    const url = await oauth.startResource();
    const servers = { remote: { type: 'http', url, auth: registerService(oauth, 'client_secret_post') } };
    writeProject(servers);
    expect(await cli(['login'])).toMatchObject({ code: 0 });
    // `network: {}` refuses loopback addresses: the revocation endpoint too.
    writeProject(servers, { network: {} });

    const result = await cli(['logout']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /warning: could not revoke the access token of remote at .*\(.*127\.0\.0\.1.*\)/,
    );
    expect(revocation.revocations).toEqual([]);
    expect(storedKeys()).toEqual([]);
  });

  it('forgets the tokens and says they stay valid when the server offers no revocation endpoint', async () => {
    oauth = await OAuthFixture.start();
    const url = await oauth.startResource();
    writeProject({ remote: { type: 'http', url, auth: registerService(oauth, 'client_secret_post') } });
    expect(await cli(['login'])).toMatchObject({ code: 0 });
    const requests = oauth.log.length;

    const result = await cli(['logout', 'remote']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      'signed out of remote: removed the stored sign-in (the authorization server offers no revocation endpoint: the tokens stay valid until they expire)\n',
    );
    expect(oauth.log.length).toBe(requests);
    expect(storedKeys()).toEqual([]);
  });
});

describe('login and logout usage errors', () => {
  it('exit 2 for an unknown server, a server without auth, a stdio server and --status with --force', async () => {
    oauth = await OAuthFixture.start();
    const url = await oauth.startResource();
    writeProject({
      remote: { type: 'http', url, auth: { type: 'oauth' } },
      plain: { type: 'http', url },
      echo: { command: process.execPath, args: [fixtureServer('echo')] },
    });
    const [unknown, unknownJson, plain, stdio, both] = await Promise.all([
      cli(['login', 'nope']),
      cli(['logout', 'nope', '--json']),
      cli(['login', 'plain']),
      cli(['logout', 'echo']),
      cli(['login', '--status', '--force']),
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("No server named 'nope'");
    expect(unknownJson.code).toBe(2);
    expect(json(unknownJson)).toMatchObject({ error: { code: 'INVALID_USAGE', exitCode: 2 } });
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain("Server 'plain'");
    expect(plain.stderr).toContain("add 'auth: { type: oauth }'");
    expect(stdio.code).toBe(2);
    expect(stdio.stderr).toContain("Server 'echo' runs over stdio");
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/option '--status' cannot be used with option '--force'/);
    // Nothing was contacted.
    expect(oauth.log).toEqual([]);
  });

  it('says there is nothing to do when no server has auth', async () => {
    writeProject({ echo: { command: process.execPath, args: [fixtureServer('echo')] } });
    const [login, logout] = await Promise.all([cli(['login']), cli(['logout', '--json'])]);
    expect(login.code).toBe(0);
    expect(login.stdout).toContain("has an 'auth' section: nothing to sign in to");
    expect(logout.code).toBe(0);
    expect(json(logout)).toEqual({ file: tokensPath(), servers: [] });
  });
});
