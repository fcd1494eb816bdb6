/**
 * The policy-lifecycle guide's audit examples (issue 40): the program verifies the file it chained, and the
 * project file fragment loads with the chain settings the guide describes.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as verifyAudit from '../../docs/snippets/policy-lifecycle/verify-audit.js';
import { loadInterlockConfig } from '../../src/config/load.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'interlock-audit-docs-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('policy lifecycle guide: the audit trail', () => {
  it('verify-audit: the chained file it wrote verifies, with one sealed chain', async () => {
    const report = await verifyAudit.main(
      join(dir, 'audit.jsonl'),
      'a docs secret of thirty-two bytes at least',
    );
    expect(report.ok).toBe(true);
    expect(report.chains).toMatchObject([{ records: 1, sealed: true }]);
  });

  it('audit.config.yaml loads: a chained file and stream under the key in INTERLOCK_AUDIT_KEY', async () => {
    const fragment = await readFile('docs/snippets/policy-lifecycle/audit.config.yaml', 'utf8');
    await writeFile(
      join(dir, 'interlock.config.yaml'),
      `mcpServers:\n  echo: { command: node, args: [echo.mjs] }\n${fragment}`,
    );
    const config = await loadInterlockConfig({ cwd: dir, env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    expect(config.audit).toEqual({
      file: join(dir, 'logs/audit.jsonl'),
      stream: { name: 'audit' },
      chain: { key: { hmacSecretEnv: 'INTERLOCK_AUDIT_KEY' }, checkpointEvery: 100, checkpointSeconds: 60 },
    });
    expect(config.auditFile).toBe(join(dir, 'logs/audit.jsonl'));
  });
});
