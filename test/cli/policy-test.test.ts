// `interlock policy test` (issue 40 item 1): cases beside the project file, run as a CI job would run them, in a
// real process: a report per case, coverage, a summary line, `--json`, exit 0 when all pass and 4 when one fails.
import { afterEach, describe, expect, it } from 'vitest';
import { json, ROOT, runCli, type TempProject, tempProject } from './helpers.js';

const POLICY = {
  version: 1,
  rules: [
    { id: 'read-notes', effect: 'allow', resource: 'mcp:notes:read_*', actions: 'execute' },
    { id: 'no-secrets', effect: 'deny', resource: 'mcp:notes:read_secret', actions: '*' },
    {
      id: 'write-drafts',
      effect: 'allow',
      resource: 'mcp:notes:write_note',
      actions: 'execute',
      when: { args: { id: { startsWith: 'drafts/' } } },
    },
    { id: 'git-asks', effect: 'ask', resource: 'mcp:git:push', actions: 'execute' },
  ],
};

const PASSING = [
  { name: 'reads a note', tool: 'mcp__notes__read_note', expect: 'allow', rule: 'read-notes' },
  { name: 'never reads a secret', tool: 'mcp__notes__read_secret', expect: 'deny', rule: 'no-secrets' },
  { name: 'writes a draft', tool: 'mcp__notes__write_note', arguments: { id: 'drafts/x' }, expect: 'allow' },
];

let project: TempProject;
afterEach(() => project?.close());

/** A project whose servers could never start: the command must not need them. */
function write(cases: unknown, policy: object = POLICY): string {
  project = tempProject();
  project.write('interlock.policy-tests.yaml', { version: 1, cases });
  return project.write('interlock.config.yaml', {
    mcpServers: { notes: { command: '/nonexistent/notes-server' } },
    policy,
  });
}

// Each case starts the CLI as a process (and a server); on a loaded machine that takes a while.
describe('interlock policy test', { timeout: 120_000 }, () => {
  it('passes every case, names the rules no case exercised, and exits 0', async () => {
    write(PASSING);
    const result = await runCli(['policy', 'test'], { cwd: project.dir });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('PASS  reads a note');
    expect(result.stdout).toContain('coverage: 3 of 4 rules exercised');
    expect(result.stdout).toContain("not exercised  'git-asks' (ask mcp:git:push)");
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('3 cases: 3 passed, 0 failed');
  });

  it('reports a failure with the expected and actual decision and the deciding rule, and exits 4', async () => {
    write([
      ...PASSING,
      {
        name: 'writes anywhere',
        tool: 'mcp__notes__write_note',
        arguments: { id: 'team/x' },
        expect: 'allow',
      },
      { name: 'push is denied', tool: 'mcp__git__push', expect: 'deny', rule: 'no-push' },
    ]);
    const result = await runCli(['policy', 'test'], { cwd: project.dir });
    expect(result.code).toBe(4);
    expect(result.stdout).toContain('FAIL  writes anywhere');
    expect(result.stdout).toContain(
      "expected  allow\n      actual    default-deny\n      reason    Rule 'write-drafts'",
    );
    expect(result.stdout).toContain(
      "expected  deny by rule 'no-push' (the policy has no rule with this id)\n      actual    ask by rule 'git-asks'",
    );
    expect(result.stdout).toContain('coverage: 4 of 4 rules exercised');
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('5 cases: 3 passed, 2 failed');
  });

  it('prints one JSON document with every case and the coverage', async () => {
    write([...PASSING, { name: 'push', resource: 'mcp:git:push', expect: 'allow' }]);
    const result = await runCli(['--json', 'policy', 'test'], { cwd: project.dir });
    expect(result.code).toBe(4);
    const doc = json<{
      passed: number;
      failed: number;
      cases: { name: string; passed: boolean; expected: object; actual: object }[];
      coverage: { rules: number; exercised: number; unexercised: string[]; byRule: object[] };
    }>(result);
    expect(doc).toMatchObject({
      passed: 3,
      failed: 1,
      coverage: { rules: 4, exercised: 4, unexercised: [] },
    });
    expect(doc.cases[3]).toMatchObject({
      name: 'push',
      passed: false,
      expected: { effect: 'allow', rule: null },
      actual: { effect: 'ask', rule: 'git-asks' },
    });
    expect(doc.coverage.byRule).toContainEqual({
      id: 'no-secrets',
      effect: 'deny',
      pattern: 'mcp:notes:read_secret',
      decided: 1,
      matched: 1,
    });
  });

  it('refuses a bad tests file naming the case, the field and its line (exit 2)', async () => {
    project = tempProject();
    project.write(
      'interlock.policy-tests.yaml',
      [
        'version: 1',
        'cases:',
        '  - name: reads',
        '    tool: mcp__notes__read_note',
        '    expect: allow',
        '  - name: typo',
        '    tool: mcp__notes__read_note',
        '    expect: allowed',
        '',
      ].join('\n'),
    );
    project.write('interlock.config.yaml', { mcpServers: {}, policy: POLICY });
    const result = await runCli(['policy', 'test'], { cwd: project.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('interlock.policy-tests.yaml');
    expect(result.stderr).toMatch(
      /cases\[1\]\.expect \(line 8, column \d+\): expected one of .*allow.*found "allowed"/,
    );
  });

  it('says where to write the cases when there is no tests file', async () => {
    project = tempProject();
    project.write('interlock.config.yaml', { mcpServers: {}, policy: POLICY });
    const result = await runCli(['policy', 'test'], { cwd: project.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('the file does not exist');
    expect(result.stderr).toContain('write the cases in interlock.policy-tests.yaml beside');
  });

  it('reads another file with --file and the policy from policy.file', async () => {
    project = tempProject();
    project.write('policies/team.yaml', POLICY);
    project.write('ci/cases.json', { version: 1, cases: PASSING });
    project.write('interlock.config.yaml', { mcpServers: {}, policy: { file: 'policies/team.yaml' } });
    const result = await runCli(['policy', 'test', '--file', 'ci/cases.json'], { cwd: project.dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('3 cases: 3 passed, 0 failed');
  });

  it("passes the policy lifecycle guide's sample (docs/snippets/policy-lifecycle)", async () => {
    const file = 'docs/snippets/policy-lifecycle/interlock.config.yaml';
    const result = await runCli(['--config', file, 'policy', 'test'], { cwd: ROOT });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('coverage: 4 of 4 rules exercised');
    expect(result.stdout).toContain('6 cases: 6 passed, 0 failed');
  });

  it("decides a caller's case with the gateway.principals bindings it matches, as interlock serve does", async () => {
    project = tempProject();
    project.write('interlock.config.yaml', {
      mcpServers: {},
      policy: POLICY,
      gateway: {
        principals: [
          {
            match: { apiKey: { subjects: ['ci'] } },
            rules: [{ id: 'ci-reads', effect: 'allow', resource: 'mcp:notes:read_*', actions: 'execute' }],
          },
        ],
      },
    });
    const ci = { method: 'apiKey', subject: 'ci' };
    project.write('interlock.policy-tests.yaml', {
      version: 1,
      cases: [
        { name: 'ci reads', caller: ci, tool: 'mcp__notes__read_note', expect: 'allow', rule: 'ci-reads' },
        // The policy lets drafts be written; ci's binding does not.
        {
          name: 'ci writes no draft',
          caller: ci,
          tool: 'mcp__notes__write_note',
          arguments: { id: 'drafts/x' },
          expect: 'default-deny',
        },
        { name: 'the policy deny still wins', caller: ci, tool: 'mcp__notes__read_secret', expect: 'deny' },
        {
          name: 'a JWT with the same subject is another caller',
          caller: { method: 'jwt', subject: 'ci' },
          tool: 'mcp__notes__read_note',
          expect: 'default-deny',
        },
        {
          name: 'without a caller, the policy itself',
          tool: 'mcp__notes__write_note',
          arguments: { id: 'drafts/x' },
          expect: 'allow',
        },
      ],
    });
    const result = await runCli(['--json', 'policy', 'test'], { cwd: project.dir });
    const doc = json<{ failed: number; cases: { name: string; passed: boolean; actual: object }[] }>(result);
    expect(doc.cases.filter((c) => !c.passed)).toEqual([]);
    expect(result.code).toBe(0);
  });
});
