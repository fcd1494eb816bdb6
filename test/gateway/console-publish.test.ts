// Publishing the project file's policy from the operator console (issue 41), through the publisher `interlock
// serve` gives the gateway: the checks of `interlock policy publish` (policy tests, requireReview), the button bound
// to the hash of the policy shown, CSRF and Origin, an audit record. A real redis-server and the echo fixture.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { consolePublisher } from '../../src/cli/console-publisher.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import type { PolicyRule } from '../../src/security/policy.js';
import { readRecording, replayRecording } from '../../src/security/replay.js';
import { RedisStateStore } from '../../src/state/redis.js';
import { SharedPolicy } from '../../src/state/shared-policy.js';
import { startCli, tempProject } from '../cli/helpers.js';
import { fixture, nodeFixture } from '../helpers/index.js';
import { redisForFile } from '../helpers/redis.js';
import {
  ALICE_KEY,
  csrfOf,
  getPage,
  htmlTags,
  OPS_KEY,
  postForm,
  sessionCookie,
  signIn,
} from './console-helpers.js';

const redis = redisForFile();
const closers: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const ECHO: PolicyRule = { id: 'echo', effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] };
const ADD: PolicyRule = { id: 'add', effect: 'allow', resource: 'mcp:echo:add', actions: ['execute'] };
let prefixes = 0;

/** A project file sharing its policy through Redis, and a gateway over it with a console that can publish. */
async function setup(state: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const p = tempProject();
  closers.push(() => p.close());
  const keyPrefix = `console-publish-${++prefixes}:`;
  const write = (rules: unknown[]) =>
    p.write('interlock.config.yaml', {
      mcpServers: { echo: { command: process.execPath, args: [fixture('echo')] } },
      policy: { version: 1, rules },
      state: { redis: { url: redis.current.url, keyPrefix }, policy: { name: 'console', ...state } },
      ...extra,
    });
  const file = write([ECHO]);
  const store = await RedisStateStore.connect({ url: redis.current.url, keyPrefix });
  closers.push(() => store.close());
  const shared = await SharedPolicy.open(store, { name: 'console', initial: { version: 1, rules: [ECHO] } });
  closers.push(() => shared.close());
  const manager = new MCPClientManager({ capabilities: shared.capabilities });
  closers.push(() => manager.close());
  await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
  const audit = new MemoryAuditSink();
  const gateway = new Gateway({
    manager,
    store,
    sharedPolicy: shared,
    policyPublisher: consolePublisher({ file, cwd: p.dir, env: process.env }, shared),
    audit,
    config: {
      auth: {
        apiKeys: [
          { key: OPS_KEY, subject: 'ops' },
          { key: ALICE_KEY, subject: 'alice' },
        ],
      },
      operators: { apiKey: { subjects: ['ops'] } },
      http: { port: 0 },
      console: { path: '/console' },
    },
  });
  closers.push(() => gateway.close());
  const address = await gateway.listen();
  const base = address.console?.href as string;
  const cookie = await signIn(address.console as URL, OPS_KEY);
  const policyPage = async () => (await getPage(`${base}/policy`, cookie)).text();
  /** The hash the publish button of `page` is bound to. */
  const shownHash = (page: string) =>
    htmlTags(page).find((t) => t.name === 'input' && t.attributes.name === 'hash')?.attributes
      .value as string;
  const publish = (page: string, fields: Record<string, string> = {}) =>
    postForm(`${base}/policy/publish`, { _csrf: csrfOf(page), hash: shownHash(page), ...fields }, { cookie });
  return { p, write, shared, audit, address, base, cookie, policyPage, shownHash, publish };
}

async function callAdd(url: URL, key: string | undefined = ALICE_KEY): Promise<string> {
  const client = new Client({ name: 'alice', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: key === undefined ? {} : { authorization: `Bearer ${key}` } },
    }),
  );
  try {
    const result = await client.callTool({ name: 'mcp__echo__add', arguments: { a: 1, b: 2 } });
    const text = (result.content as { type: string; text?: string }[])[0]?.text ?? '';
    return result.isError === true ? `error: ${text}` : text;
  } catch (err) {
    return `error: ${(err as Error).message}`;
  } finally {
    await client.close();
  }
}

describe('publishing from the console', () => {
  it('shows what would be published and publishes it; the next call follows the new version', async () => {
    const t = await setup();
    expect(await callAdd(t.address.url)).toMatch(/^error:/);
    t.write([ECHO, ADD]);
    const page = await t.policyPage();
    expect(page).toMatch(/Rules added<\/th><td>add<\/td>/);
    expect(page).toMatch(/Rules removed<\/th><td>none<\/td>/);
    expect(page).toContain('Policy tests: the project has no tests file.');
    const before = t.shared.version;
    const response = await t.publish(page);
    expect(response.status).toBe(303);
    expect(t.shared.version).toBe(before + 1);
    expect(t.shared.policy?.rules.map((r) => r.id)).toEqual(['echo', 'add']);
    expect(await callAdd(t.address.url)).toBe('3');
    const after = await t.policyPage();
    expect(after).toContain(`Published policy ${t.shownHash(page).slice(0, 12)}`);
    expect(after).toMatch(/Rules added<\/th><td>none<\/td>/);
    expect(t.audit.records).toContainEqual(
      expect.objectContaining({
        agent: 'console',
        action: 'publish-policy',
        principal: 'ops',
        allowed: true,
        reason: expect.stringContaining(`as version ${before + 1}`),
      }),
    );
  });

  it('refuses a policy that changed on disk after it was shown', async () => {
    const t = await setup();
    t.write([ECHO, ADD]);
    const page = await t.policyPage();
    // Someone edits the file between the review and the click: a rule the operator never saw.
    t.write([ECHO, ADD, { id: 'fail', effect: 'allow', resource: 'mcp:echo:fail', actions: ['execute'] }]);
    const version = t.shared.version;
    expect((await t.publish(page)).status).toBe(303);
    expect(t.shared.version).toBe(version);
    expect(t.shared.policy?.rules.map((r) => r.id)).toEqual(['echo']);
    const after = await t.policyPage();
    expect(after).toContain('changed since it was shown');
    expect(t.shownHash(after)).not.toBe(t.shownHash(page));
    expect(t.audit.records).toContainEqual(
      expect.objectContaining({ action: 'publish-policy', allowed: false }),
    );
  });

  it('refuses a policy whose tests fail, and shows the failures', async () => {
    const t = await setup();
    t.write([ECHO, ADD]);
    t.p.write('interlock.policy-tests.yaml', {
      version: 1,
      cases: [
        { name: 'echo is allowed', tool: 'mcp__echo__echo', expect: 'allow', rule: 'echo' },
        { name: 'add stays denied', tool: 'mcp__echo__add', expect: 'deny' },
      ],
    });
    const page = await t.policyPage();
    expect(page).toContain('Policy tests: 1 failed (add stays denied), 1 passed');
    const version = t.shared.version;
    await t.publish(page);
    expect(t.shared.version).toBe(version);
    const after = await t.policyPage();
    expect(after).toMatch(/1 of 2 policy tests in .* failed \(&#39;add stays denied&#39;\)/);
    expect(after).toContain('interlock policy test');
  });

  it('with requireReview, publishes only with the review hash of the diff', async () => {
    const t = await setup({ requireReview: true }, { audit: { record: { file: 'recording.jsonl' } } });
    t.p.write('recording.jsonl', '');
    t.write([ECHO, ADD]);
    const page = await t.policyPage();
    expect(page).toContain('name="reviewed"');
    const version = t.shared.version;
    await t.publish(page);
    expect(t.shared.version).toBe(version);
    expect(await t.policyPage()).toContain('publishing requires a reviewed diff');
    await t.publish(page, { reviewed: '0123456789ab' });
    expect(t.shared.version).toBe(version);
    const wrong = await t.policyPage();
    expect(wrong).toContain('is not the review hash');
    const recording = await readRecording(`${t.p.dir}/recording.jsonl`);
    const { reviewHash } = replayRecording(recording, { version: 1, rules: [ECHO, ADD] });
    expect(wrong).not.toContain(reviewHash.slice(0, 12));
    await t.publish(page, { reviewed: reviewHash.slice(0, 12) });
    expect(t.shared.version).toBe(version + 1);
  });

  it('refuses a publish without the CSRF token or from another origin', async () => {
    const t = await setup();
    t.write([ECHO, ADD]);
    const page = await t.policyPage();
    const version = t.shared.version;
    const form = { hash: t.shownHash(page) };
    expect((await postForm(`${t.base}/policy/publish`, form, { cookie: t.cookie })).status).toBe(403);
    const foreign = await postForm(
      `${t.base}/policy/publish`,
      { ...form, _csrf: csrfOf(page) },
      { cookie: t.cookie, origin: 'http://evil.example' },
    );
    expect(foreign.status).toBe(403);
    expect(t.shared.version).toBe(version);
  });
});

describe('publishing from the console of interlock serve', () => {
  it('publishes the project file as edited on disk, and the running gateway follows it', async () => {
    const p = tempProject();
    closers.push(() => p.close());
    const write = (rules: unknown[]) =>
      p.write('interlock.config.yaml', {
        mcpServers: { echo: { command: process.execPath, args: [fixture('echo')] } },
        policy: { version: 1, rules },
        state: {
          redis: { url: redis.current.url, keyPrefix: 'console-publish-serve:' },
          policy: { name: 'serve' },
        },
        gateway: { console: { path: '/console' } },
      });
    const file = write([ECHO]);
    // Run from the project's directory, where tsx finds no tsconfig: the pages name their JSX runtime themselves.
    const cli = startCli(['--config', file, 'serve', '--http', '--port', '0'], { cwd: p.dir });
    closers.push(async () => {
      if (cli.child.exitCode === null) cli.child.kill('SIGTERM');
      await cli.done;
    });
    await cli.waitFor(/operator console on (\S+)/);
    const url = new URL(/listening on (\S+)/.exec(cli.stdout())?.[1] ?? '');
    const consoleUrl = /operator console on (\S+)/.exec(cli.stdout())?.[1] as string;
    expect(await callAdd(url, undefined)).toMatch(/^error:/);
    // A loopback gateway without auth: the console signs nobody in, and its first page sets the session.
    const first = await getPage(`${consoleUrl}/policy`);
    const cookie = sessionCookie(first);
    expect(await first.text()).toMatch(/Rules added<\/th><td>none<\/td>/);
    write([ECHO, ADD]);
    const page = await (await getPage(`${consoleUrl}/policy`, cookie)).text();
    expect(page).toMatch(/Rules added<\/th><td>add<\/td>/);
    const hash = htmlTags(page).find((t) => t.attributes.name === 'hash')?.attributes.value as string;
    const response = await postForm(
      `${consoleUrl}/policy/publish`,
      { _csrf: csrfOf(page), hash },
      { cookie },
    );
    expect(response.status).toBe(303);
    expect(await (await getPage(`${consoleUrl}/policy`, cookie)).text()).toContain(
      `Published policy ${hash.slice(0, 12)}`,
    );
    expect(await callAdd(url, undefined)).toBe('3');
  });
});
