/**
 * Issue 15: every error the auth area throws is coded. A caller's mistake (an option missing, a headers helper that
 * fails) is `INVALID_CONFIG`; a sign-in or stored credential that a retry will not fix is `AUTH_FAILED` with a
 * `reason`. Each is produced by the real piece: a loopback receiver given a real redirect, a token file on disk, a
 * helper command that really exits non-zero.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LoopbackReceiver } from '../../src/auth/loopback.js';
import { OAuthProvider } from '../../src/auth/provider.js';
import { commandHeaders } from '../../src/auth/server-auth.js';
import { FileTokenStore, StateTokenStore } from '../../src/auth/token-store.js';
import { AuthError, ConfigError } from '../../src/errors.js';
import { MemoryStateStore } from '../../src/state/memory.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function receiver(): Promise<LoopbackReceiver> {
  const r = await LoopbackReceiver.start();
  cleanup.push(() => r.close());
  return r;
}

describe('the loopback receiver', () => {
  it('rejects a redirect with the wrong state as AUTH_FAILED state_mismatch', async () => {
    const r = await receiver();
    const waiting = r.waitForResponse({ state: 'expected' }).catch((e: unknown) => e);
    await fetch(`${r.redirectUrl}?code=c&state=forged`);
    const err = await waiting;
    expect(err).toBeInstanceOf(AuthError);
    expect(err).toMatchObject({ code: 'AUTH_FAILED', reason: 'state_mismatch' });
    expect((err as Error).message).toContain('Start the sign-in again');
  });

  it('rejects a redirect that carries an OAuth error as AUTH_FAILED sign_in_failed, naming the error code', async () => {
    const r = await receiver();
    const waiting = r.waitForResponse({}).catch((e: unknown) => e);
    await fetch(`${r.redirectUrl}?error=access_denied&error_description=secret-ish-text`);
    const err = await waiting;
    expect(err).toMatchObject({ code: 'AUTH_FAILED', reason: 'sign_in_failed' });
    expect((err as Error).message).toContain('access_denied');
    expect((err as Error).message).not.toContain('secret-ish-text');
  });
});

describe('stored credentials', () => {
  it('reports a token file that is not a JSON object as AUTH_FAILED credentials_unreadable, naming the file only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'interlock-auth-errors-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'tokens.json');
    writeFileSync(path, '["at-secret-1"]', { mode: 0o600 });
    const err = await new FileTokenStore(path).load('https://example.com/mcp').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AUTH_FAILED', reason: 'credentials_unreadable' });
    expect((err as Error).message).toContain(path);
    expect((err as Error).message).not.toContain('at-secret-1');
  });

  it('reports shared OAuth state that is not JSON as AUTH_FAILED credentials_unreadable', async () => {
    const state = new MemoryStateStore();
    cleanup.push(() => state.close());
    await state.set('oauth:k', '{not json at-secret-2');
    const err = await new StateTokenStore(state).load('k').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AUTH_FAILED', reason: 'credentials_unreadable' });
    expect((err as Error).message).not.toContain('at-secret-2');
  });
});

describe('OAuthProvider', () => {
  it('refuses options that miss what the grant needs with INVALID_CONFIG naming the field', () => {
    const make = (extra: Record<string, unknown>) => () =>
      new OAuthProvider({ serverUrl: 'https://example.com/mcp', ...extra } as never);
    expect(make({})).toThrow(ConfigError);
    expect(make({})).toThrow(/redirectUrl/);
    expect(make({ grant: 'jwt_bearer' })).toThrow(/set assertion/);
    expect(make({ grant: 'cross_app_access', clientId: 'c' })).toThrow(/set crossAppAccess/);
    expect(make({ grant: 'client_credentials', tokenEndpointAuthMethod: 'private_key_jwt' })).toThrow(
      /set privateKey/,
    );
  });

  it('says how to sign in when a browser sign-in is needed and nothing can open one', async () => {
    const provider = new OAuthProvider({
      serverUrl: 'https://example.com/mcp',
      redirectUrl: 'http://127.0.0.1:1/callback',
    });
    const err = await provider
      .redirectToAuthorization(new URL('https://as.example.com/authorize'))
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AUTH_FAILED', reason: 'sign_in_required' });
    expect((err as Error).message).toContain('interlock login');
    const verifier = await provider.codeVerifier().catch((e: unknown) => e);
    expect(verifier).toMatchObject({ code: 'AUTH_FAILED', reason: 'sign_in_failed' });
  });
});

describe('headers helpers', () => {
  it('reports a helper that exits non-zero, or prints no JSON object, as INVALID_CONFIG without its output', async () => {
    const failing = commandHeaders({
      command: process.execPath,
      args: ['-e', 'process.stdout.write("secret-value"); process.exit(3)'],
    });
    const err = await failing({ server: 's', url: 'https://example.com/mcp' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INVALID_CONFIG', issues: [{ path: 'headersHelper' }] });
    expect((err as Error).message).not.toContain('secret-value');

    const noObject = commandHeaders({
      command: process.execPath,
      args: ['-e', 'process.stdout.write("[1]")'],
    });
    const err2 = await noObject({ server: 's', url: 'https://example.com/mcp' }).catch((e: unknown) => e);
    expect(err2).toMatchObject({ code: 'INVALID_CONFIG' });
    expect((err2 as Error).message).toContain('did not print a JSON object');
  });
});
