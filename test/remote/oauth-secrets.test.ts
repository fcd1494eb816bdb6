// Issue 9, "never printed": no access token, refresh token, client secret, authorization code or PKCE verifier
// reaches a log line, an event, an audit record, a span or an error (message, stack, cause chain), through
// successful sign-ins, a refresh, client credentials, and the ways a flow fails.
import { randomBytes } from 'node:crypto';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createServerAuth, MemoryTokenStore } from '../../src/auth/index.js';
import type { MCPManagerEventName } from '../../src/interop/events.js';
import { type Logger, MCPClientManager } from '../../src/interop/index.js';
import { CapabilitySet, MemoryAuditSink } from '../../src/security/index.js';
import { recordSpans } from '../helpers/otel.js';
import { autoApprove } from './oauth-client.js';
import { OAuthFixture } from './oauth-fixture.js';

// Every manager event: the `satisfies` makes this list fail to compile when an event is added or renamed.
const EVENT_NAMES = Object.keys({
  connecting: 0,
  connected: 0,
  connection_failed: 0,
  disconnected: 0,
  tools_changed: 0,
  tool_refused: 0,
  tool_name_collision: 0,
  tool_definition_changed: 0,
  reconnecting: 0,
  reconnected: 0,
  failed: 0,
  tool_call_started: 0,
  tool_call_completed: 0,
  tool_call_failed: 0,
  tool_call_handed_off: 0,
  tool_call_denied: 0,
  request_completed: 0,
  request_failed: 0,
  warning: 0,
  server_log: 0,
} satisfies Record<MCPManagerEventName, 0>) as MCPManagerEventName[];

/**
 * Turns anything collected into plain data: errors with name, message, stack, every own property and the whole
 * cause chain. Only a cycle (an object inside itself) is cut; an object met twice is written out twice.
 */
function plain(value: unknown, path: object[] = []): unknown {
  if (typeof value === 'bigint' || typeof value === 'symbol' || typeof value === 'function')
    return String(value);
  if (typeof value !== 'object' || value === null) return value;
  if (path.includes(value)) return '[cycle]';
  const inner = [...path, value];
  if (value instanceof Error) {
    const out: Record<string, unknown> = { name: value.name, message: value.message, stack: value.stack };
    for (const key of Object.getOwnPropertyNames(value)) out[key] = plain((value as never)[key], inner);
    out.cause = plain(value.cause, inner);
    return out;
  }
  if (value instanceof URL) return value.href;
  if (value instanceof Map) return plain([...value.entries()], inner);
  if (value instanceof Set) return plain([...value], inner);
  if (Array.isArray(value)) return value.map((v) => plain(v, inner));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v, inner)]));
}

function spanData(span: ReadableSpan): unknown {
  return {
    name: span.name,
    attributes: span.attributes,
    status: span.status,
    events: span.events.map((e) => ({ name: e.name, attributes: e.attributes })),
    links: span.links.map((l) => l.attributes),
  };
}

/** The secrets of `secrets` that occur in `text`. */
function leaks(text: string, secrets: readonly string[]): string[] {
  return secrets.filter((s) => text.includes(s));
}

/** Every secret the fixture handed out or received, read from its maps and its request log. */
function fixtureSecrets(fixture: OAuthFixture, clientSecrets: string[]) {
  const forms = fixture.log.map((e) => e.form ?? {});
  const fromForms = (field: string) => forms.map((f) => f[field]).filter((v): v is string => v !== undefined);
  const tokenForms = fixture.log.filter((e) => e.path.endsWith('/token')).map((e) => e.form ?? {});
  return {
    accessTokens: [...fixture.tokens.keys()],
    refreshTokens: [...new Set([...fixture.refreshTokens.keys(), ...fromForms('refresh_token')])],
    clientSecrets,
    codes: [
      ...new Set([...fixture.codes.keys(), ...tokenForms.map((f) => f.code).filter((c) => c !== undefined)]),
    ],
    verifiers: fromForms('code_verifier'),
  };
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => {});
  cleanup = [];
});

describe('OAuth secrets stay out of logs, events, audit records, spans and errors', () => {
  it('through sign-in, refresh, client credentials, refused tokens and failing calls', async () => {
    const fixture = await OAuthFixture.start();
    cleanup.push(() => fixture.close());
    const otel = recordSpans();
    cleanup.push(() => otel.close());

    const collected: { kind: string; value: unknown }[] = [];
    const collect = (kind: string) => (value: unknown) => collected.push({ kind, value });
    const log =
      (level: string) =>
      (message: string, fields?: Record<string, unknown>): void => {
        collected.push({ kind: `log.${level}`, value: { message, fields } });
      };
    const logger: Logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
    // Whatever the SDK or a dependency prints to the console counts as a log line too.
    for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
      const spy = vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
        collected.push({ kind: `console.${method}`, value: args });
      });
      cleanup.push(async () => spy.mockRestore());
    }
    const errors: unknown[] = [];
    const attempt = async <T>(run: () => Promise<T>): Promise<T | undefined> => {
      try {
        return await run();
      } catch (err) {
        errors.push(err);
        return undefined;
      }
    };

    const clientSecret = `cs-${randomBytes(16).toString('hex')}`;
    const wrongSecret = `wrong-${randomBytes(16).toString('hex')}`;
    fixture.register({
      client_id: 'svc',
      client_secret: clientSecret,
      token_endpoint_auth_method: 'client_secret_post',
      redirect_uris: [],
    });
    const m2m = (secret: string) => ({
      type: 'oauth' as const,
      grant: 'client_credentials' as const,
      clientId: 'svc',
      clientSecret: secret,
      tokenEndpointAuthMethod: 'client_secret_post' as const,
    });
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:**', 'execute');
    const audit = new MemoryAuditSink();
    const manager = new MCPClientManager({
      capabilities,
      audit,
      logger,
      tracer: otel.tracer,
      network: { allowHosts: ['127.0.0.1'] },
      http: { proxy: 'none' },
      serverAuth: createServerAuth({ store: new MemoryTokenStore(), openUrl: autoApprove }),
    });
    cleanup.push(() => manager.close());
    for (const name of EVENT_NAMES) manager.on(name, collect(`event.${name}`));
    const results: unknown[] = [];
    const call = async (tool: string) => results.push(await attempt(() => manager.callTool(tool, {})));

    // Authorization code with PKCE, then a refresh on reconnect once the access token expired.
    const codeUrl = await fixture.startResource();
    await attempt(() =>
      manager.connectServer({ name: 'code', transport: 'http', url: codeUrl, auth: { type: 'oauth' } }),
    );
    await call('mcp__code__whoami');
    await manager.disconnectServer('code');
    fixture.expireAll();
    await attempt(() =>
      manager.connectServer({ name: 'code', transport: 'http', url: codeUrl, auth: { type: 'oauth' } }),
    );
    await call('mcp__code__whoami');
    expect(fixture.log.some((e) => e.form?.grant_type === 'refresh_token')).toBe(true);

    // Client credentials with client_secret_post, and a tool that fails.
    const m2mUrl = await fixture.startResource();
    await attempt(() =>
      manager.connectServer({ name: 'm2m', transport: 'http', url: m2mUrl, auth: m2m(clientSecret) }),
    );
    await call('mcp__m2m__whoami');
    await call('mcp__m2m__fail');

    // Failures: a wrong client secret; tokens for another audience, at connect over both transports and mid-session.
    // (Another server: state is stored per server URL, and m2m's token would simply be used.)
    const badUrl = await fixture.startResource();
    await attempt(() =>
      manager.connectServer({ name: 'bad-secret', transport: 'http', url: badUrl, auth: m2m(wrongSecret) }),
    );
    fixture.issueFor = 'http://127.0.0.1:9/elsewhere';
    const sseUrl = await fixture.startResource({ transport: 'sse' });
    await attempt(() =>
      manager.connectServer({ name: 'aud-sse', transport: 'sse', url: sseUrl, auth: m2m(clientSecret) }),
    );
    const audUrl = await fixture.startResource();
    await attempt(() =>
      manager.connectServer({ name: 'aud-http', transport: 'http', url: audUrl, auth: m2m(clientSecret) }),
    );
    fixture.expireAll();
    await call('mcp__m2m__whoami');
    collected.push({ kind: 'health', value: manager.health() });
    for (const c of manager.connections) collected.push({ kind: 'connection.error', value: c.error });
    await manager.close();

    collected.push({ kind: 'errors', value: errors });
    collected.push({ kind: 'results', value: results });
    collected.push({ kind: 'audit', value: audit.records });
    collected.push({ kind: 'spans', value: otel.spans().map(spanData) });
    const text = JSON.stringify(plain(collected));

    const secrets = fixtureSecrets(fixture, [clientSecret, wrongSecret]);
    // The secrets are real and many: two sign-ins' worth of tokens, a code and its verifier, and the secrets.
    expect(secrets.accessTokens.length).toBeGreaterThanOrEqual(4);
    expect(secrets.refreshTokens.length).toBeGreaterThanOrEqual(2);
    expect(secrets.codes.length).toBeGreaterThanOrEqual(1);
    expect(secrets.verifiers.length).toBeGreaterThanOrEqual(1);
    const all = Object.values(secrets).flat();
    for (const s of all) expect(s.length).toBeGreaterThanOrEqual(16);
    // The secrets were really used on the wire (so they could have leaked).
    expect(fixture.log.some((e) => e.form?.client_secret === clientSecret)).toBe(true);
    expect(fixture.log.some((e) => e.form?.client_secret === wrongSecret)).toBe(true);

    // The collector saw each kind of output, including the failures.
    const kinds = new Set(collected.map((c) => c.kind));
    for (const kind of [
      'event.connected',
      'event.connection_failed',
      'event.tool_call_completed',
      'log.warn',
    ])
      expect(kinds).toContain(kind);
    expect(errors.length).toBeGreaterThanOrEqual(3);
    expect(audit.records.length).toBeGreaterThanOrEqual(4);
    expect(otel.spans().map((s) => s.name)).toEqual(
      expect.arrayContaining(['initialize', 'tools/list', 'tools/call whoami', 'tools/call fail']),
    );
    expect(text).toContain('refused 2 access tokens in a row');
    expect(text).toContain('the fail tool failed on purpose');
    const failed = collected.filter((c) => c.kind === 'event.connection_failed');
    expect(failed.map((c) => (c.value as { server: string }).server)).toEqual([
      'bad-secret',
      'aud-sse',
      'aud-http',
    ]);

    // And the check itself finds a secret hidden deep in a cause chain.
    const canary = all[0] ?? '';
    const hidden = new Error('outer', {
      cause: new Error('inner', { cause: new Error(`Bearer ${canary}`) }),
    });
    expect(leaks(JSON.stringify(plain([{ kind: 'errors', value: [hidden] }])), all)).toEqual([canary]);

    expect(leaks(text, all)).toEqual([]);
  });
});
