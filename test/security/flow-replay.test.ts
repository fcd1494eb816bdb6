/**
 * Flow decisions in replay before rollout (issue 42 with issue 40): the recording keeps the labels of the target and
 * of the session (names only), a new policy's flow rules are decided from them, and a flow condition that needs what
 * the recording did not keep makes the request undecidable, never unchanged.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PermissionDeniedError } from '../../src/errors.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { FlowState } from '../../src/security/flow.js';
import { CapabilityGate } from '../../src/security/gate.js';
import { type Policy, parsePolicy } from '../../src/security/policy.js';
import { DecisionRecorder } from '../../src/security/recording.js';
import { readRecording, replayRecording } from '../../src/security/replay.js';
import type { AccessRequest } from '../../src/security/types.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const OLD: Policy = parsePolicy({
  version: 1,
  rules: [{ id: 'all', effect: 'allow', resource: 'mcp:**', actions: 'execute' }],
});

const NEW: Policy = parsePolicy({
  version: 1,
  rules: [
    { id: 'all', effect: 'allow', resource: 'mcp:**', actions: 'execute' },
    {
      id: 'trifecta',
      effect: 'deny',
      resource: 'mcp:**',
      actions: 'execute',
      when: { flow: { target: ['egress'], seen: ['private', 'untrusted'] } },
    },
    {
      id: 'no-leaks',
      effect: 'deny',
      resource: 'mcp:mail:send_email',
      actions: 'execute',
      when: { flow: { carries: ['secret'] } },
    },
  ],
});

const PRIVATE_TEXT = 'the private memo says the launch moves to the second week of June';

function send(flow: FlowState | undefined, labels: readonly string[] | undefined): AccessRequest {
  return {
    resource: 'mcp:mail:send_email',
    action: 'execute',
    server: 'mail',
    tool: 'send_email',
    context: { args: { to: 'x@example.com', body: PRIVATE_TEXT }, flow, labels },
  };
}

async function recordCalls(calls: AccessRequest[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'interlock-flow-replay-'));
  dirs.push(dir);
  const file = join(dir, 'recording.jsonl');
  const recorder = new DecisionRecorder({ file, digestKey: 'k'.repeat(40) });
  const gate = new CapabilityGate({ capabilities: CapabilitySet.fromPolicy(OLD), audit: recorder });
  for (const c of calls)
    await gate.authorize(c).catch((err) => expect(err).toBeInstanceOf(PermissionDeniedError));
  await recorder.close();
  return file;
}

describe('flow in the decision recording and its replay', () => {
  it('records the labels of the target and the session, names only', async () => {
    const flow = new FlowState();
    flow.record('mcp:mail:read_inbox', ['private'], PRIVATE_TEXT);
    const file = await recordCalls([send(flow, ['egress'])]);
    const text = await readFile(file, 'utf8');
    expect(JSON.parse(text)).toMatchObject({ labels: ['egress'], flow: { labels: ['private'] } });
    expect(text).not.toContain('launch');
  });

  it('decides flow rules again from the recorded labels, and flips the calls the trifecta now denies', async () => {
    const trifecta = new FlowState();
    trifecta.record('mcp:mail:read_inbox', ['private']);
    trifecta.record('mcp:web:fetch', ['untrusted']);
    const clean = new FlowState();
    clean.record('mcp:web:fetch', ['untrusted']);
    const file = await recordCalls([send(trifecta, ['egress']), send(clean, ['egress'])]);
    const report = replayRecording(await readRecording(file), NEW);
    expect(report).toMatchObject({ flipped: 1, unchanged: 1, undecidable: 0 });
    expect(report.byRule[0]).toMatchObject({ key: 'all → trifecta', count: 1, kinds: { 'allow→deny': 1 } });
    expect(report.byRule[0]?.examples[0]?.line).toBe(1);
  });

  it('counts a call recorded without a flow state or target labels as undecidable, never as unchanged', async () => {
    const file = await recordCalls([send(undefined, undefined)]);
    const report = replayRecording(await readRecording(file), NEW);
    expect(report).toMatchObject({ flipped: 0, unchanged: 0, undecidable: 1 });
    expect(report.undecidableByTool[0]?.examples[0]?.needs).toEqual(['(session labels)', '(target labels)']);
  });

  it('decides carries only when the session had none of its labels; otherwise the provenance is missing', async () => {
    const noSecret = new FlowState();
    noSecret.record('mcp:mail:read_inbox', ['private'], PRIVATE_TEXT);
    const secret = new FlowState();
    secret.record('mcp:vault:read', ['secret'], PRIVATE_TEXT);
    const file = await recordCalls([send(noSecret, []), send(secret, [])]);
    const report = replayRecording(await readRecording(file), NEW);
    expect(report).toMatchObject({ unchanged: 1, undecidable: 1 });
    expect(report.undecidableByTool[0]?.examples[0]).toMatchObject({
      line: 2,
      needs: ['(argument provenance)'],
    });
  });
});
