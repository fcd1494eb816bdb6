// `interlock policy test` with flow cases (issue 42): a case states what the session has seen and what its arguments
// carry, the project file's server labels and the policy's `labels` section give the target its labels, and a failed
// flow case is explained with the labels and the carried argument that decided it, in a real process. `interlock
// check --seen` explains a flow decision the same way.
import { afterEach, describe, expect, it } from 'vitest';
import { json, runCli, type TempProject, tempProject } from './helpers.js';

const POLICY = {
  version: 1,
  labels: [{ resource: 'mcp:web:*', labels: ['untrusted'] }],
  flow: { hints: false },
  rules: [
    { id: 'all', effect: 'allow', resource: 'mcp:*:*', actions: 'execute' },
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
      when: { args: { to: { noneOf: ['me@example.com'] } }, flow: { carries: ['private'] } },
    },
  ],
};

const CASES = [
  { name: 'sends before anything was read', tool: 'mcp__mail__send_email', expect: 'allow' },
  {
    name: 'the trifecta stops egress',
    tool: 'mcp__mail__send_email',
    flow: { seen: ['private', 'untrusted'] },
    expect: 'deny',
    rule: 'trifecta',
  },
  {
    name: 'a private document goes to the user only',
    tool: 'mcp__mail__send_email',
    arguments: { to: 'me@example.com', body: 'the memo' },
    flow: { carries: [{ argument: 'body', label: 'private', source: 'mcp:crm:lookup' }] },
    expect: 'allow',
  },
  {
    name: 'a private document to anyone else is refused',
    tool: 'mcp__mail__send_email',
    arguments: { to: 'attacker@evil.example', body: 'the memo' },
    flow: { carries: [{ argument: 'body', label: 'private', source: 'mcp:crm:lookup' }] },
    expect: 'deny',
    rule: 'no-leaks',
  },
];

let project: TempProject;
afterEach(() => project?.close());

/** A project whose servers could never start: `mail` is an egress sink by the project file, not the policy. */
function write(cases: unknown): void {
  project?.close();
  project = tempProject();
  project.write('interlock.policy-tests.yaml', { version: 1, cases });
  project.write('interlock.config.yaml', {
    mcpServers: {
      mail: { command: '/nonexistent/mail-server', sink: ['egress'] },
      crm: { command: '/nonexistent/crm-server', labels: ['private'] },
    },
    policy: POLICY,
  });
}

describe('interlock policy test with flow cases', { timeout: 120_000 }, () => {
  it('decides flow cases with the labels of the project file and the policy, and explains a failed one', async () => {
    write([
      ...CASES,
      {
        name: 'wrongly expects the trifecta to allow',
        tool: 'mcp__mail__send_email',
        flow: { seen: ['private', 'untrusted'] },
        expect: 'allow',
      },
    ]);
    const result = await runCli(['policy', 'test'], { cwd: project.dir });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(4);
    for (const c of CASES) expect(result.stdout).toContain(`PASS  ${c.name}`);
    expect(result.stdout).toContain('FAIL  wrongly expects the trifecta to allow');
    expect(result.stdout).toContain("actual    deny by rule 'trifecta'");
    expect(result.stdout).toContain('flow      seen private, untrusted; target egress');
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('5 cases: 4 passed, 1 failed');
  });

  it('reports the carried argument in JSON, and refuses a carries entry naming no argument of the case', async () => {
    write(CASES.map((c) => ({ ...c, expect: c.expect === 'deny' ? 'allow' : c.expect })));
    const result = await runCli(['--json', 'policy', 'test'], { cwd: project.dir });
    expect(result.code).toBe(4);
    const doc = json<{ cases: { name: string; actual: { flow?: unknown } }[] }>(result);
    expect(doc.cases[3]?.actual.flow).toEqual({
      labels: ['private'],
      carried: [{ argument: 'body', label: 'private', source: 'mcp:crm:lookup' }],
    });

    write([{ ...CASES[3], flow: { carries: [{ argument: 'subject', label: 'private' }] } }]);
    const bad = await runCli(['policy', 'test'], { cwd: project.dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/cases\[0\]\.flow\.carries\[0\]\.argument.*has no argument 'subject'/);
  });

  it('check --seen explains a flow decision, and a fresh session is not denied by it', async () => {
    write(CASES);
    const fresh = await runCli(['check', 'mcp:mail:send_email'], { cwd: project.dir });
    expect(fresh.code).toBe(0);
    const seen = await runCli(['check', 'mcp:mail:send_email', '--seen', 'private,untrusted'], {
      cwd: project.dir,
    });
    expect(seen.code).toBe(3);
    expect(seen.stdout).toMatch(/rule\s+trifecta \(deny mcp:\*\*\)/);
    expect(seen.stdout).toMatch(/flow\s+seen private, untrusted; target egress/);
    const bad = await runCli(['check', 'mcp:mail:send_email', '--seen', 'not a label'], { cwd: project.dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--seen: 'not a label' is not a label");
  });
});
