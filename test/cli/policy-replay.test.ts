// Replay before rollout (issue 40, item 2): real `interlock call`s against the echo fixture are recorded
// (audit.record), `interlock policy diff` shows what an edited policy flips, and `interlock policy publish` with
// state.policy.requireReview publishes only with the review hash of that diff (a real redis-server).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReplayReport } from '../../src/security/replay.js';
import { fixture } from '../helpers/fixtures.js';
import { redisForFile } from '../helpers/redis.js';
import { json, runCli, type TempProject, tempProject } from './helpers.js';

const redis = redisForFile();

const KEY = 'replay-test-digest-key-0123456789abcdef';
const env = { RECORDING_KEY: KEY };

const OLD_RULES = [
  { id: 'echo', effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] },
  { id: 'add', effect: 'allow', resource: 'mcp:echo:add', actions: ['execute'] },
];

/** The edited policy: `add` only up to a = 10, `echo` only for short texts, and `fail` allowed. */
const NEW_POLICY = {
  version: 1,
  rules: [
    {
      id: 'echo-short',
      effect: 'allow',
      resource: 'mcp:echo:echo',
      actions: ['execute'],
      when: { args: { text: { maxLength: 3 } } },
    },
    {
      id: 'add-small',
      effect: 'allow',
      resource: 'mcp:echo:add',
      actions: ['execute'],
      when: { args: { a: { max: 10 } } },
    },
    { id: 'fail', effect: 'allow', resource: 'mcp:echo:fail', actions: ['execute'] },
  ],
};

function writeProject(p: TempProject, policy: unknown): string {
  return p.write('interlock.config.yaml', {
    mcpServers: { echo: { command: process.execPath, args: [fixture('echo')] } },
    policy,
    audit: {
      record: {
        file: 'recording.jsonl',
        keep: [{ resource: 'mcp:echo:add', args: ['a'] }],
        digestKey: '${RECORDING_KEY}',
      },
    },
    state: {
      redis: { url: redis.current.url, keyPrefix: 'policy-replay:' },
      policy: { name: 'reviewed', requireReview: true },
    },
  });
}

// One project, and one recording of real calls through the CLI, for the whole file (each CLI run starts a process
// and a server: slow on a loaded machine). The publish test edits the project and runs last.
const p = tempProject();
const file = join(p.dir, 'interlock.config.yaml');
const cli = (...args: string[]) =>
  runCli(['--config', file, ...args], { cwd: p.dir, env, timeoutMs: 180_000 });
const SLOW = { timeout: 600_000 };

beforeAll(async () => {
  writeProject(p, { version: 1, rules: OLD_RULES });
  expect((await cli('call', 'mcp__echo__add', '--args', '{"a":1,"b":2}')).code).toBe(0);
  expect((await cli('call', 'mcp__echo__add', '--args', '{"a":50,"b":1}')).code).toBe(0);
  expect((await cli('call', 'mcp__echo__echo', '--args', '{"text":"hello"}')).code).toBe(0);
  expect((await cli('call', 'mcp__echo__fail', '--args', '{}')).code).toBe(3);
}, 600_000);
afterAll(() => p.close());

describe('interlock policy diff', () => {
  it(
    'shows which recorded calls an edited policy would flip, and which the recording cannot decide',
    SLOW,
    async () => {
      const recording = readFileSync(join(p.dir, 'recording.jsonl'), 'utf8');
      expect(recording.trim().split('\n')).toHaveLength(4);
      // The echoed text was not allowed to be kept; neither it nor the digest key is in the file.
      expect(recording).not.toContain('hello');
      expect(recording).not.toContain(KEY);

      const next = p.write('next-policy.yaml', NEW_POLICY);
      const report = json<ReplayReport & { policy: string }>(
        await cli('--json', 'policy', 'diff', '--against', 'recording.jsonl', next),
      );
      expect(report).toMatchObject({ policy: next, unchanged: 0, flipped: 3, undecidable: 1 });
      expect(report.kinds).toEqual({ 'allow→deny': 1, 'deny→allow': 1, rule: 1 });
      expect(report.byRule.map((g) => [g.key, g.count])).toEqual([
        ['(none) → fail', 1],
        ['add → (none)', 1],
        ['add → add-small', 1],
      ]);
      const add = report.byTool.find((g) => g.key === 'echo/add');
      expect(add?.kinds).toEqual({ 'allow→deny': 1, rule: 1 });
      expect(add?.examples.find((e) => e.kind === 'allow→deny')?.args?.a).toEqual({ value: 50 });
      // The text of the echo was recorded as a digest, and the new rule reads it: not counted as unchanged.
      expect(report.undecidableByTool).toMatchObject([{ key: 'echo/echo', count: 1 }]);
      expect(report.undecidableByTool[0]?.examples[0]?.needs).toEqual(['text']);

      const text = await cli('policy', 'diff', '--against', 'recording.jsonl', next);
      expect(text.code).toBe(0);
      expect(text.stdout).toContain(
        '0 unchanged, 3 flips (1 allow→deny, 1 deny→allow, 1 rule), 1 undecidable',
      );
      expect(text.stdout).toContain('echo/echo  1  (1 undecidable)');
      expect(text.stdout).toContain(`review hash: ${report.reviewHash}`);
    },
  );

  it(
    'reads the new policy from a project file as from a policy file, and the recording from audit.record',
    SLOW,
    async () => {
      const other = p.write('other.yaml', { mcpServers: {}, policy: NEW_POLICY });
      const fromProject = json<ReplayReport>(await cli('--json', 'policy', 'diff', other));
      const fromPolicy = json<ReplayReport>(
        await cli('--json', 'policy', 'diff', p.write('next.yaml', NEW_POLICY)),
      );
      expect(fromProject.flipped).toBe(3);
      expect(fromProject.reviewHash).toBe(fromPolicy.reviewHash);
    },
  );

  it('says what to give when there is no recording', async () => {
    const bare = tempProject();
    try {
      const f = bare.write('interlock.config.yaml', { mcpServers: {}, policy: { version: 1, rules: [] } });
      const result = await runCli(['--config', f, 'policy', 'diff'], { cwd: bare.dir });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('--against FILE, or audit.record.file');
    } finally {
      bare.close();
    }
  });
});

describe('interlock policy publish with state.policy.requireReview', () => {
  it(
    'refuses without a review hash or with a stale or wrong one, and publishes with the right one',
    SLOW,
    async () => {
      // The operator edits the policy in the project file: that is what publish would roll out.
      writeProject(p, NEW_POLICY);

      const missing = await cli('--json', 'policy', 'publish');
      expect(missing.code).toBe(3);
      expect(json<{ error: { code: string; reason: string } }>(missing).error).toMatchObject({
        code: 'POLICY_NOT_REVIEWED',
        reason: 'missing',
      });

      // Without a policy argument the diff compares the project file's policy: what publish would publish.
      const diff = json<ReplayReport>(await cli('--json', 'policy', 'diff'));
      expect(diff.flipped).toBe(3);

      const wrong = await cli('policy', 'publish', '--reviewed', '0123456789ab');
      expect(wrong.code).toBe(3);
      expect(wrong.stderr).toContain('is not the review hash');
      // The refusal never tells the hash that would pass: only the diff does.
      expect(wrong.stderr + wrong.stdout).not.toContain(diff.reviewHash.slice(0, 12));

      const published = await cli('policy', 'publish', '--reviewed', diff.reviewHash.slice(0, 12));
      expect(published.code).toBe(0);
      expect(published.stdout).toContain("policy 'reviewed' is at version 2 (3 rules)");

      // The recording grew after the diff was reviewed: the same hash is stale now.
      expect((await cli('call', 'mcp__echo__add', '--args', '{"a":2,"b":2}')).code).toBe(0);
      const stale = await cli('policy', 'publish', '--reviewed', diff.reviewHash);
      expect(stale.code).toBe(3);
      expect(stale.stderr).toContain('changed since the diff was reviewed');
    },
  );
});
