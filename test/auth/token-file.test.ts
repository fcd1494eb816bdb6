/** Issue 14, item 9: the token file is written exclusively and read only when it is private. */
import {
  chmodSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileTokenStore } from '../../src/auth/token-store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'interlock-tokens-'));
  dirs.push(d);
  return d;
}
const STATE = {
  tokens: { access_token: 'at-secret-123', token_type: 'Bearer', refresh_token: 'rt-secret-456' },
};

describe('FileTokenStore', () => {
  it('round-trips state in a 0600 file', async () => {
    const file = join(tempDir(), 'tokens.json');
    const store = new FileTokenStore(file);
    await store.save('https://mcp.example/', STATE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    await expect(new FileTokenStore(file).load('https://mcp.example/')).resolves.toEqual(STATE);
  });

  it('a symlink planted at the old temporary name receives nothing', async () => {
    const dir = tempDir();
    const file = join(dir, 'tokens.json');
    const stolen = join(dir, 'attacker-reads-this');
    writeFileSync(stolen, '');
    // The name the store used to write through: `${path}.${pid}.tmp`.
    symlinkSync(stolen, `${file}.${process.pid}.tmp`);
    await new FileTokenStore(file).save('k', STATE);
    expect(readFileSync(stolen, 'utf8')).toBe('');
    expect(lstatSync(file).isSymbolicLink()).toBe(false);
    expect(readFileSync(file, 'utf8')).toContain('at-secret-123');
  });

  it('refuses a token file that is a symlink, for reading and for writing', async () => {
    const dir = tempDir();
    const target = join(dir, 'elsewhere.json');
    writeFileSync(target, '{}', { mode: 0o600 });
    const file = join(dir, 'tokens.json');
    symlinkSync(target, file);
    const store = new FileTokenStore(file);
    await expect(store.load('k')).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('symbolic link'),
    });
    await expect(store.save('k', STATE)).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    expect(readFileSync(target, 'utf8')).toBe('{}');
  });

  it('refuses a token file readable by group or others, saying how to fix it, without printing its content', async () => {
    const file = join(tempDir(), 'tokens.json');
    writeFileSync(file, JSON.stringify({ k: STATE }));
    chmodSync(file, 0o644);
    const err = await new FileTokenStore(file).load('k').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringContaining('chmod 600') });
    expect(String((err as Error).message)).not.toContain('secret');
    chmodSync(file, 0o600);
    await expect(new FileTokenStore(file).load('k')).resolves.toEqual(STATE);
  });
});
