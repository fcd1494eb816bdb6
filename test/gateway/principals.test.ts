// Bindings name principals by how they authenticated (issue 38): the same name under another method, or a
// shorthand name on a gateway with several ways in, never matches.
import { describe, expect, it } from 'vitest';
import { GatewayConfigSchema, shorthandMethod } from '../../src/config/gateway.js';
import { type Principal, principalMatches } from '../../src/gateway/principals.js';

const as = (via: Principal['via'], subject: string, groups: string[] = []): Principal => ({
  subject,
  groups,
  scopes: [],
  via,
});

describe('principalMatches', () => {
  it('matches a name only under the method the principal authenticated with', () => {
    const match = { apiKey: { subjects: ['ci-bot'] }, jwt: { groups: ['editors'] } };
    expect(principalMatches(match, as('api-key', 'ci-bot'), undefined)).toBe(true);
    expect(principalMatches(match, as('jwt', 'ci-bot'), undefined)).toBe(false);
    expect(principalMatches(match, as('mtls', 'ci-bot'), undefined)).toBe(false);
    expect(principalMatches(match, as('jwt', 'ann', ['editors']), undefined)).toBe(true);
    expect(principalMatches(match, as('api-key', 'ann', ['editors']), undefined)).toBe(false);
  });

  it('reads the shorthand as the one method the gateway has, and as nothing for the others', () => {
    const match = { subjects: ['local'] };
    expect(principalMatches(match, as('stdio', 'local'), 'stdio')).toBe(true);
    expect(principalMatches(match, as('api-key', 'local'), 'stdio')).toBe(false);
    expect(principalMatches(match, as('stdio', 'local'), undefined)).toBe(false);
  });

  it('never matches an anonymous caller', () => {
    expect(principalMatches({ subjects: ['anonymous'] }, as('none', 'anonymous'), 'stdio')).toBe(false);
  });
});

describe('the shorthand in the config', () => {
  it('stands for the only way in: stdio without HTTP auth, API keys when they are the only way', () => {
    expect(shorthandMethod({})).toBe('stdio');
    expect(shorthandMethod({ auth: { apiKeys: [{}] } })).toBe('apiKey');
    expect(
      shorthandMethod({ auth: { apiKeys: [{}] }, http: { tls: { clientCertificates: 'optional' } } }),
    ).toBeUndefined();
  });

  it('refuses clients without jwt, naming the field', () => {
    const parsed = GatewayConfigSchema.safeParse({
      auth: { apiKeys: [{ key: 'a-key-0123456789abcdef', subject: 'x' }] },
      principals: [{ match: { clients: ['app'] }, rules: [] }],
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({
      path: ['principals', 0, 'match', 'clients'],
      message: expect.stringContaining('only JWT callers have an OAuth client id'),
    });
  });

  it('refuses a method entry that lists nothing, and a field a method does not have', () => {
    expect(GatewayConfigSchema.safeParse({ principals: [{ match: { jwt: {} }, rules: [] }] }).success).toBe(
      false,
    );
    expect(
      GatewayConfigSchema.safeParse({ principals: [{ match: { apiKey: { clients: ['app'] } }, rules: [] }] })
        .success,
    ).toBe(false);
  });
});
