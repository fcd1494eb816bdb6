// Replay before rollout (issue 40, item 2): decisions recorded by the real gate, decided again under a new policy.
import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, PermissionDeniedError } from '../../src/errors.js';
import { combineAuditSinks, MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { CapabilityGate } from '../../src/security/gate.js';
import { type Policy, parsePolicy } from '../../src/security/policy.js';
import { DecisionRecorder, type RecordedDecision } from '../../src/security/recording.js';
import { readRecording, replayRecording } from '../../src/security/replay.js';
import type { AccessRequest } from '../../src/security/types.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempFile(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'interlock-replay-'));
  dirs.push(dir);
  return join(dir, name);
}

const KEY = 'k'.repeat(40);

const OLD: Policy = parsePolicy({
  version: 1,
  rules: [
    { id: 'notes-read', effect: 'allow', resource: 'mcp:notes:read_note', actions: ['execute'] },
    { id: 'notes-write', effect: 'allow', resource: 'mcp:notes:write_note', actions: ['execute'] },
    { id: 'search', effect: 'allow', resource: 'mcp:web:search', actions: ['execute'] },
  ],
});

function call(tool: string, args: Record<string, unknown>, server = 'notes'): AccessRequest {
  return {
    resource: `mcp:${server}:${tool}`,
    action: 'execute',
    server,
    tool,
    definitionHash: 'a'.repeat(64),
    context: {
      args,
      agent: 'triage',
      principal: 'alice',
      annotations: { readOnlyHint: tool === 'read_note' },
    },
  };
}

/** Runs `calls` through a real gate deciding with `policy`, recording to `file`. */
async function record(file: string, policy: Policy, calls: AccessRequest[]): Promise<void> {
  const recorder = new DecisionRecorder({
    file,
    digestKey: KEY,
    keep: [{ resource: 'mcp:notes:*', args: ['path', 'apiKey'] }],
    secrets: ['hunter2-secret'],
  });
  const gate = new CapabilityGate({
    capabilities: CapabilitySet.fromPolicy(policy),
    audit: combineAuditSinks(new MemoryAuditSink(), recorder),
  });
  for (const c of calls)
    await gate.authorize(c).catch((err) => expect(err).toBeInstanceOf(PermissionDeniedError));
  await recorder.close();
}

async function lines(file: string): Promise<RecordedDecision[]> {
  return (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as RecordedDecision);
}

describe('DecisionRecorder', () => {
  it("records a decision's inputs and outcome, keeping only allowed argument values", async () => {
    const file = await tempFile('recording.jsonl');
    await record(file, OLD, [call('write_note', { path: '/notes/a.md', body: 'secret plans', n: 7 })]);
    const [line] = await lines(file);
    expect(line).toMatchObject({
      v: 1,
      agent: 'triage',
      principal: 'alice',
      resource: 'mcp:notes:write_note',
      action: 'execute',
      server: 'notes',
      tool: 'write_note',
      definitionHash: 'a'.repeat(64),
      annotations: { readOnlyHint: false },
      decision: { effect: 'allow', allowed: true, ruleId: 'notes-write' },
    });
    expect(line?.args?.path).toEqual({ value: '/notes/a.md' });
    expect(line?.args?.n).toMatchObject({ type: 'number' });
    const body = line?.args?.body as { type: string; digest: string };
    expect(body.type).toBe('string');
    // A keyed digest: only the key's holder can compute it, so a short value cannot be guessed from the file.
    const expected = createHmac('sha256', KEY).update(JSON.stringify('secret plans')).digest('hex');
    expect(body.digest).toBe(`hmac-sha256:${expected}`);
    expect(JSON.stringify(line)).not.toContain('secret plans');
  });

  it('never keeps a secret-named argument or a value holding a known secret, even when listed', async () => {
    const file = await tempFile('recording.jsonl');
    await record(file, OLD, [
      call('write_note', { apiKey: 'abc', path: 'see hunter2-secret' }),
      call('write_note', { path: { nested: { token: 'x' } } }),
    ]);
    const text = await readFile(file, 'utf8');
    expect(text).not.toContain('hunter2-secret');
    const [first, second] = await lines(file);
    expect(first?.args?.apiKey).toHaveProperty('digest');
    expect(first?.args?.path).toHaveProperty('digest');
    expect(second?.args?.path).toMatchObject({ type: 'object' });
  });

  it('digests with a random key of its own when none is configured, never written to the file', async () => {
    const file = await tempFile('recording.jsonl');
    const a = new DecisionRecorder({ file });
    const b = new DecisionRecorder({ file });
    expect(a.keyId).not.toBe(b.keyId);
    await Promise.all([a.close(), b.close()]);
  });

  it('refuses a short digest key and a bad keep pattern, naming the field', () => {
    expect(() => new DecisionRecorder({ file: 'x', digestKey: 'short' })).toThrow(/digestKey/);
    expect(() => new DecisionRecorder({ file: 'x', keep: [{ resource: '', args: ['a'] }] })).toThrow(
      ConfigError,
    );
  });
});

describe('replayRecording', () => {
  it('reports the decisions a new policy flips, grouped by rule and by tool, and leaves the rest unchanged', async () => {
    const file = await tempFile('recording.jsonl');
    await record(file, OLD, [
      call('read_note', { path: '/notes/a.md' }),
      call('write_note', { path: '/notes/a.md' }),
      call('write_note', { path: '/etc/passwd' }),
      call('delete_note', { path: '/notes/a.md' }),
      call('search', { q: 'weather' }, 'web'),
    ]);
    const next = parsePolicy({
      version: 1,
      rules: [
        { id: 'notes-read', effect: 'allow', resource: 'mcp:notes:read_note', actions: ['execute'] },
        {
          id: 'notes-write-scoped',
          effect: 'allow',
          resource: 'mcp:notes:write_note',
          actions: ['execute'],
          when: { args: { path: { startsWith: '/notes/' } } },
        },
        { id: 'delete-ask', effect: 'ask', resource: 'mcp:notes:delete_note', actions: ['execute'] },
        { id: 'search-v2', effect: 'allow', resource: 'mcp:web:search', actions: ['execute'] },
      ],
    });
    const report = replayRecording(await readRecording(file), next);
    expect(report.recording.records).toBe(5);
    expect(report.unchanged).toBe(1);
    expect(report.flipped).toBe(4);
    expect(report.undecidable).toBe(0);
    expect(report.kinds).toEqual({ 'allow→deny': 1, 'deny→ask': 1, rule: 2 });
    const byRule = Object.fromEntries(report.byRule.map((g) => [g.key, g.count]));
    expect(byRule).toEqual({
      'notes-write → notes-write-scoped': 1,
      'notes-write → (none)': 1,
      '(none) → delete-ask': 1,
      'search → search-v2': 1,
    });
    const writes = report.byTool.find((g) => g.key === 'notes/write_note');
    expect(writes?.kinds).toEqual({ 'allow→deny': 1, rule: 1 });
    const denied = writes?.examples.find((e) => e.kind === 'allow→deny');
    expect(denied?.args?.path).toEqual({ value: '/etc/passwd' });
    expect(denied?.to?.reason).toMatch(/notes-write-scoped/);
  });

  it('reports a request as undecidable when the new policy reads an argument recorded only as a digest', async () => {
    const file = await tempFile('recording.jsonl');
    await record(file, OLD, [call('search', { q: 'weather' }, 'web'), call('read_note', { path: '/n' })]);
    const next = parsePolicy({
      version: 1,
      rules: [
        { id: 'notes-read', effect: 'allow', resource: 'mcp:notes:read_note', actions: ['execute'] },
        {
          id: 'search',
          effect: 'allow',
          resource: 'mcp:web:search',
          actions: ['execute'],
          when: { args: { q: { maxLength: 100 } } },
        },
      ],
    });
    const report = replayRecording(await readRecording(file), next);
    expect(report.undecidable).toBe(1);
    expect(report.flipped).toBe(0);
    expect(report.unchanged).toBe(1);
    expect(report.undecidableByTool[0]).toMatchObject({ key: 'web/search', count: 1 });
    expect(report.undecidableByTool[0]?.examples[0]?.needs).toEqual(['q']);
  });

  it('decides with the recorded time, agent and annotations', async () => {
    const file = await tempFile('recording.jsonl');
    await record(file, OLD, [call('read_note', { path: '/n' }), call('write_note', { path: '/n' })]);
    const next = parsePolicy({
      version: 1,
      rules: [
        {
          id: 'all',
          effect: 'allow',
          resource: 'mcp:notes:*',
          actions: ['execute'],
          when: { agent: { equals: 'triage' } },
        },
        {
          id: 'no-writes',
          effect: 'deny',
          resource: 'mcp:notes:*',
          actions: ['execute'],
          when: { annotations: { readOnlyHint: false } },
        },
      ],
    });
    const report = replayRecording(await readRecording(file), next);
    expect(report.kinds).toEqual({ 'allow→deny': 1, rule: 1 });
    expect(report.byRule.map((g) => g.key).sort()).toEqual(['notes-read → all', 'notes-write → no-writes']);
  });

  it('binds the review hash to the policy, the recording and the flips', async () => {
    const file = await tempFile('recording.jsonl');
    await record(file, OLD, [call('read_note', { path: '/n' })]);
    const recording = await readRecording(file);
    const same = replayRecording(recording, OLD);
    expect(replayRecording(recording, OLD).reviewHash).toBe(same.reviewHash);
    expect(same.reviewHash).toMatch(/^[0-9a-f]{64}$/);
    const other = parsePolicy({
      version: 1,
      rules: [...OLD.rules, { effect: 'deny', resource: 'mcp:x:y', actions: '*' }],
    });
    expect(replayRecording(recording, other).reviewHash).not.toBe(same.reviewHash);
    await record(file, OLD, [call('read_note', { path: '/m' })]);
    expect(replayRecording(await readRecording(file), OLD).reviewHash).not.toBe(same.reviewHash);
  });

  it('refuses a file that is not a recording, naming the line', async () => {
    const file = await tempFile('recording.jsonl');
    await writeFile(file, '{"v":1}\nnot json\n');
    const err = await readRecording(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues.map((i) => i.path)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^line 1/), 'line 2']),
    );
  });
});
