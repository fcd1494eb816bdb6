/**
 * The security guide's examples are programs: each snippet asserts what the guide claims, and this
 * suite runs them, checks what they return, and checks that the guide includes exactly these files.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as conditions from '../../docs/snippets/security/conditions.js';
import * as derive from '../../docs/snippets/security/derive.js';
import * as flow from '../../docs/snippets/security/flow.js';
import * as gate from '../../docs/snippets/security/gate.js';
import * as patterns from '../../docs/snippets/security/patterns.js';
import * as pinning from '../../docs/snippets/security/pinning.js';
import * as policy from '../../docs/snippets/security/policy.js';
import * as quickstart from '../../docs/snippets/security/quickstart.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const GUIDE = join(ROOT, 'docs/guides/security.md');
const SNIPPETS = join(ROOT, 'docs/snippets/security');

describe('security guide snippets', () => {
  it('quickstart: the deny beats the grant', () => {
    expect(quickstart.main()).toMatchObject({ allowed: false, effect: 'deny', ruleId: 'no-secrets' });
  });

  it('patterns: every row of the grammar table holds', () => {
    expect(patterns.main()).toBe(patterns.examples.length);
  });

  it('conditions: a path outside /data is not allowed', () => {
    expect(conditions.main()).toMatchObject({ allowed: false, effect: 'default-deny' });
  });

  it('policy: loads, round-trips and names the bad field', () => {
    expect(policy.main()).toMatch(/did you mean 'mcp:github:\*'/);
  });

  it('flow: the private memo goes to the user only, and nothing leaves after untrusted content', () => {
    expect(flow.main()).toMatchObject({
      allowed: false,
      effect: 'deny',
      ruleId: 'lethal-trifecta',
      flow: { labels: ['private', 'untrusted'], target: ['egress'] },
    });
  });

  it("derive: the parent's revoke reaches the grandchild", () => {
    expect(derive.main()).toMatchObject({ allowed: false });
  });

  it('gate: approves the bot, denies the intern, audits both without the secret', async () => {
    const records = await gate.main();
    expect(records.map((r) => [r.agent, r.effect, r.allowed])).toEqual([
      ['release-bot', 'allow', true],
      ['intern', 'ask', false],
    ]);
    expect(records[0]?.arguments).toEqual({ pr: 42, token: '[redacted]' });
  });

  it('pinning: a poisoned description compares as changed after a restart', async () => {
    expect(await pinning.main()).toEqual([
      { server: 'web', tool: 'fetch', hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
  });

  it('the guide includes every snippet file, and every include exists', () => {
    const guide = readFileSync(GUIDE, 'utf8');
    const included = [...guide.matchAll(/--8<-- "([^"]+)"/g)].map((m) => m[1]!);
    for (const path of included) expect(existsSync(join(ROOT, path)), path).toBe(true);
    const files = readdirSync(SNIPPETS).map((f) => `docs/snippets/security/${f}`);
    expect(new Set(included.filter((p) => p.startsWith('docs/snippets/security/')))).toEqual(new Set(files));
  });
});
