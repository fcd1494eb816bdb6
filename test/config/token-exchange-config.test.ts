// Issue 41: a server's `auth` of type `token_exchange` is validated once, with errors that say what to fix and
// never print a secret.
import { describe, expect, it } from 'vitest';
import { parseServerConfig } from '../../src/config/servers.js';
import { ConfigError } from '../../src/errors.js';

const base = { name: 'issues', transport: 'http', url: 'https://issues.example.com/mcp' };

function issuesOf(auth: unknown): { path: string; message: string }[] {
  try {
    parseServerConfig({ ...base, auth });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).not.toContain('client-secret-value');
    return [...(err as ConfigError).issues];
  }
  throw new Error('parsed');
}

describe('auth: token_exchange', () => {
  it('applies its defaults: a bounded token cache, a skew, and the per-caller session bounds', () => {
    const config = parseServerConfig({
      ...base,
      auth: { type: 'token_exchange', tokenEndpoint: 'https://login.example.com/token', clientId: 'gw' },
    });
    expect(config.transport !== 'stdio' && config.auth).toMatchObject({
      type: 'token_exchange',
      maxCachedTokens: 1000,
      expirySkewMs: 30_000,
      maxConnections: 100,
      idleTimeoutMs: 300_000,
    });
  });

  it('needs a token endpoint or an issuer', () => {
    expect(issuesOf({ type: 'token_exchange', clientId: 'gw', clientSecret: 'client-secret-value' })).toEqual(
      [
        expect.objectContaining({
          path: expect.stringMatching(/auth\.tokenEndpoint$/),
          message: 'set tokenEndpoint or issuer',
        }),
      ],
    );
  });

  it('refuses unknown fields, a missing clientId and an unknown auth type, naming each', () => {
    const unknown = issuesOf({
      type: 'token_exchange',
      tokenEndpoint: 'https://login.example.com/token',
      clientId: 'gw',
      clientSecret: 'client-secret-value',
      forwardCallerToken: true,
    });
    expect(unknown.map((i) => i.path).join()).toMatch(/auth/);
    expect(unknown.map((i) => i.message).join()).toMatch(/forwardCallerToken/);
    const noClient = issuesOf({ type: 'token_exchange', tokenEndpoint: 'https://login.example.com/token' });
    expect(noClient.map((i) => i.path)).toEqual([expect.stringMatching(/auth\.clientId$/)]);
    const kind = issuesOf({ type: 'passthrough' });
    expect(kind.map((i) => i.message).join()).toMatch(/oauth.*token_exchange/);
  });
});
