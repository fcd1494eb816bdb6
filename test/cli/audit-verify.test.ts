/**
 * `interlock audit verify` (issue 40) as real processes: the CLI calls the echo fixture over stdio with a project
 * whose audit file is chained under a secret from the environment, then verifies the file it wrote: clean, then
 * edited (exit 1, the line and sequence named, in text and --json).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../helpers/fixtures.js';
import { json, runCli, type TempProject, tempProject } from './helpers.js';

const AUDIT_KEY = 'a project audit secret of thirty-two bytes or more';
let project: TempProject;
let lines: string[];

const cli = (args: string[], env: Record<string, string | undefined> = { INTERLOCK_AUDIT_KEY: AUDIT_KEY }) =>
  runCli(args, { cwd: project.dir, env });

// Two real calls, each its own CLI process (so its own chain), before the checks: CLI runs are slow on a busy machine.
beforeAll(async () => {
  project = tempProject();
  project.write('interlock.config.yaml', {
    mcpServers: { echo: { command: process.execPath, args: [fixture('echo')] } },
    policy: {
      version: 1,
      rules: [
        { id: 'echo-allowed', effect: 'allow', resource: 'mcp:echo:echo', actions: 'execute' },
        { id: 'no-throw', effect: 'deny', resource: 'mcp:echo:throw', actions: '*' },
      ],
    },
    audit: {
      file: 'logs/audit.jsonl',
      chain: { key: { hmacSecretEnv: 'INTERLOCK_AUDIT_KEY' }, checkpointEvery: 1 },
    },
  });
  const allowed = await cli(['call', 'mcp__echo__echo', '--args', '{"text":"hello"}']);
  expect(allowed.code, allowed.stderr).toBe(0);
  const denied = await cli(['call', 'mcp__echo__throw', '--args', '{}']);
  expect(denied.code).toBe(3);
  lines = readFileSync(`${project.dir}/logs/audit.jsonl`, 'utf8').trimEnd().split('\n');
}, 120_000);
afterAll(() => project.close());

describe('interlock audit verify', () => {
  it('verifies the chained file that real calls through the gate wrote', async () => {
    // Two processes, two chains: record, checkpoint (every 1), final checkpoint each.
    expect(lines.map((l) => Object.keys(JSON.parse(l) as object).includes('checkpoint'))).toEqual([
      false,
      true,
      true,
      false,
      true,
      true,
    ]);
    expect(lines.join('\n')).not.toContain(AUDIT_KEY);

    const clean = await cli(['audit', 'verify']);
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stdout).toMatch(/^ok .*audit\.jsonl: 2 chains, 2 records, 2 sealed, no finding\n$/);
  });

  it('names an edited line by its number, chain and sequence, exit 1, in text and --json', async () => {
    const file = `${project.dir}/logs/audit.jsonl`;

    // The denial rewritten as an allowed call.
    const edited = [...lines];
    edited[3] = (edited[3] as string).replace('"allowed":false', '"allowed":true');
    expect(edited[3]).not.toBe(lines[3]);
    writeFileSync(file, `${edited.join('\n')}\n`);
    const text = await cli(['audit', 'verify']);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/TAMPERED .*audit\.jsonl: 2 chains, 2 records, 2 sealed, 1 finding/);
    expect(text.stdout).toMatch(/ {2}line 4 {2}edited \(chain [0-9a-f]{8} seq 1\): seq 1 was edited/);
    const report = json<{ ok: boolean; trails: { findings: { kind: string; at: string; seq: number }[] }[] }>(
      await cli(['audit', 'verify', 'logs/audit.jsonl', '--json']),
    );
    expect(report.ok).toBe(false);
    expect(report.trails[0]?.findings).toMatchObject([{ kind: 'edited', at: 'line 4', seq: 1 }]);
  });

  it('says what to set when the key is missing or wrong, and never prints the key', async () => {
    const missing = await cli(['audit', 'verify'], { INTERLOCK_AUDIT_KEY: undefined });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('INTERLOCK_AUDIT_KEY');
    const wrong = await cli(['audit', 'verify', '--key-env', 'OTHER_KEY', '--json'], {
      OTHER_KEY: 'another secret that is thirty-two bytes long',
    });
    expect(wrong.code).toBe(1);
    const kinds = json<{ trails: { findings: { kind: string }[] }[] }>(wrong).trails[0]?.findings.map(
      (f) => f.kind,
    );
    expect(kinds).toContain('forged-checkpoint');
    expect(wrong.stdout + wrong.stderr).not.toContain('another secret');
  });
});
