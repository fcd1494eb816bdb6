/**
 * The project file's `audit` section (issue 40): chain settings validated where the file is loaded, keys read from
 * the environment or files when the sinks are made, and every mistake a coded error that names the field and never
 * the key.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditVerifyKey, projectAuditSink } from '../../src/cli/audit-sinks.js';
import { loadInterlockConfig } from '../../src/config/load.js';
import { parseAuditLines, verifyAuditChain } from '../../src/security/audit-verify.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'interlock-audit-config-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
async function load(audit: string, extra = '') {
  const file = join(dir, `p${++n}.yaml`);
  await writeFile(
    file,
    `mcpServers:\n  echo: { command: node, args: [echo.mjs] }\naudit:\n${audit}\n${extra}`,
  );
  return loadInterlockConfig({ file, cwd: dir, env: {} });
}

const record = {
  time: '2026-01-01T00:00:00.000Z',
  resource: 'mcp:echo:echo',
  action: 'execute',
  effect: 'allow' as const,
  allowed: true,
  reason: 'allowed by rule echo',
  argumentKeys: [],
};

describe('the audit section of the project file', () => {
  it('refuses a stream without state.redis, and a key it does not know, naming each field', async () => {
    await expect(load('  stream: true')).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      issues: expect.arrayContaining([expect.objectContaining({ path: 'audit.stream' })]),
    });
    await expect(load('  file: a.jsonl\n  chain: { key: { password: x } }')).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      issues: expect.arrayContaining([
        expect.objectContaining({ path: expect.stringMatching(/^audit\.chain\.key/) }),
      ]),
    });
  });

  it('reads an HMAC secret from the variable it names, and says which variable is unset without a value', async () => {
    const config = await load(
      '  file: logs/a.jsonl\n  chain: { key: { hmacSecretEnv: AUDIT_KEY }, checkpointEvery: 1 }',
    );
    await expect(projectAuditSink(config, {}, undefined)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('AUDIT_KEY is not set'),
    });
    const secret = 'an environment secret of thirty-two bytes or more';
    const sink = await projectAuditSink(config, { AUDIT_KEY: secret }, undefined);
    await sink?.write(record);
    await sink?.close?.();
    const text = await readFile(join(dir, 'logs/a.jsonl'), 'utf8');
    expect(text).not.toContain(secret);
    const key = await auditVerifyKey(config.audit?.chain as never, { AUDIT_KEY: secret });
    expect(verifyAuditChain(parseAuditLines(text), { key }).ok).toBe(true);
  });

  it('signs with an Ed25519 key file relative to the project file, and verifies with its public key file', async () => {
    const pair = generateKeyPairSync('ed25519');
    await writeFile(join(dir, 'audit.pem'), pair.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    await writeFile(join(dir, 'audit.pub'), pair.publicKey.export({ type: 'spki', format: 'pem' }));
    const config = await load(
      '  file: logs/ed.jsonl\n  chain: { key: { ed25519PrivateKeyFile: audit.pem, ed25519PublicKeyFile: audit.pub } }',
    );
    const sink = await projectAuditSink(config, {}, undefined);
    await sink?.write(record);
    await sink?.close?.();
    const text = await readFile(join(dir, 'logs/ed.jsonl'), 'utf8');
    expect(text).toContain('"alg":"ed25519"');
    const key = await auditVerifyKey(config.audit?.chain as never, {});
    expect(key).toEqual({ ed25519PublicKey: expect.stringContaining('PUBLIC KEY') });
    expect(verifyAuditChain(parseAuditLines(text), { key }).ok).toBe(true);
  });

  it('says which key file it cannot read', async () => {
    const config = await load('  file: logs/x.jsonl\n  chain: { key: { hmacSecretFile: missing.key } }');
    await expect(projectAuditSink(config, {}, undefined)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(
        /audit\.chain\.key\.hmacSecretFile: cannot read .*missing\.key \(ENOENT\)/,
      ),
    });
  });
});
