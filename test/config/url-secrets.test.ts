/**
 * Issue 39: a URL from a variable is masked in its credentials only when it says nothing but where (scheme, host,
 * port), so messages can name the server; a path, query or fragment may carry a token, so then it is masked whole.
 */
import { describe, expect, it } from 'vitest';
import { collectSecretValues, createMasker } from '../../src/config/secrets.js';

function masked(url: string, text: string): string {
  const secrets = new Set<string>();
  collectSecretValues('${URL}', { URL: url }, secrets);
  return createMasker(secrets)(text);
}

describe('URL values of variables', () => {
  it('shows a URL that is only scheme, host and port', () => {
    expect(masked('redis://127.0.0.1:6379', 'at redis://127.0.0.1:6379.')).toBe('at redis://127.0.0.1:6379.');
    expect(masked('redis://10.0.0.5:6379/2', 'at redis://10.0.0.5:6379/2')).toBe(
      'at redis://10.0.0.5:6379/2',
    );
  });

  it('masks the username and password of such a URL', () => {
    expect(masked('redis://fleet-user:hunter2-pass@db:6379', 'redis://fleet-user:hunter2-pass@db:6379')).toBe(
      'redis://***:***@db:6379',
    );
  });

  it('masks a URL with a path, query or fragment whole', () => {
    for (const url of [
      'https://hooks.example.com/services/T000/B000/XXXXXXXX',
      'https://mcp.example.com/mcp?key=abcdef123',
      'https://mcp.example.com/#token-abcdef',
    ]) {
      expect(masked(url, `at ${url}`)).toBe('at ***');
    }
  });
});
