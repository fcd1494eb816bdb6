// Issue 15, "config parsed once": a project file section is loaded by one zod pipeline whose output is the config
// type: variables expanded (their values kept as secrets), validated, certificate paths made absolute.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type LoadContext, sectionSchemas } from '../../src/config/sections.js';
import type { HttpConfig } from '../../src/config/servers.js';
import { toConfigIssues } from '../../src/zod-issues.js';

const DIR = '/projects/demo';

function context(env: Record<string, string>): LoadContext {
  return { env, dir: DIR, secrets: new Set<string>() };
}

describe('section schemas', () => {
  it('expand variables, keep their values as secrets and make certificate paths absolute', () => {
    const ctx = context({ PROXY_PASS: 's3cret-pass', CA: 'certs/ca.pem' });
    const result = sectionSchemas(ctx).http.safeParse({
      proxy: 'http://user:${PROXY_PASS}@proxy.internal:3128',
      tls: { caFile: ['${CA}', '/etc/ssl/extra.pem'], certFile: '~/client.pem', keyFile: 'key.pem' },
    });
    expect(result.error).toBeUndefined();
    const http: HttpConfig | undefined = result.data;
    expect(http?.proxy).toBe('http://user:s3cret-pass@proxy.internal:3128');
    expect(http?.tls?.caFile).toEqual([join(DIR, 'certs/ca.pem'), '/etc/ssl/extra.pem']);
    expect(http?.tls?.certFile).toBe(join(homedir(), 'client.pem'));
    expect(http?.tls?.keyFile).toBe(join(DIR, 'key.pem'));
    expect(ctx.secrets.has('s3cret-pass')).toBe(true);
  });

  it('report an unset variable at its field and do not validate the half-expanded text', () => {
    const ctx = context({});
    const result = sectionSchemas(ctx).network.safeParse({ allowHosts: ['ok.example', '${MISSING_HOST}'] });
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(toConfigIssues(result.error, 'network')).toEqual([
      {
        path: 'network.allowHosts[1]',
        message: "environment variable 'MISSING_HOST' is not set (set it, or write ${MISSING_HOST:-default})",
      },
    ]);
  });

  it('report a bad field with the path the file has', () => {
    const result = sectionSchemas(context({})).http.safeParse({ connections: 'many' });
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(toConfigIssues(result.error, 'http').map((i) => i.path)).toEqual(['http.connections']);
  });

  it("resolve the gateway's certificate files against the project file's directory", () => {
    const result = sectionSchemas(context({})).gateway.safeParse({
      http: { tls: { certFile: 'tls/cert.pem', keyFile: 'tls/key.pem' } },
    });
    expect(result.error).toBeUndefined();
    expect(result.data?.http?.tls).toMatchObject({
      certFile: join(DIR, 'tls/cert.pem'),
      keyFile: join(DIR, 'tls/key.pem'),
    });
  });
});
