/**
 * `interlock policy export --cedar` and Cedar policies in the project file (issue 40), as a real CLI process in a
 * temp project: the export prints Cedar that loads and decides as the native policy did; a rule with no Cedar
 * form stops it, naming the rule; a Cedar policy that does not type-check stops the project file from loading.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { json, runCli, type TempProject, tempProject } from './helpers.js';

const POLICY = {
  version: 1,
  rules: [
    { id: 'notes-read', effect: 'allow', resource: 'mcp:notes:read_*', actions: 'execute' },
    { id: 'no-secret', effect: 'deny', resource: 'mcp:notes:read_secret', actions: 'execute' },
    {
      id: 'drafts',
      effect: 'allow',
      resource: 'mcp:notes:write_note',
      actions: 'execute',
      when: { args: { folder: { oneOf: ['drafts', 'scratch'] } } },
    },
  ],
};

const projects: TempProject[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.close();
});

function project(policy: unknown): TempProject {
  const p = tempProject();
  projects.push(p);
  p.write('interlock.config.yaml', { mcpServers: {}, policy });
  return p;
}

describe('interlock policy export --cedar', { timeout: 120_000 }, () => {
  it('prints the policy in Cedar and names the schema; the export loads and decides as the native policy', async () => {
    const native = project(POLICY);
    const result = await runCli(['policy', 'export', '--cedar'], { cwd: native.dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /@id\("notes-read"\)\npermit \(principal, action == Interlock::Action::"execute", resource\)/,
    );
    expect(result.stdout).toMatch(/@id\("no-secret"\)\nforbid/);
    expect(result.stderr).toMatch(/schema: .*schema[/\\]interlock\.cedarschema/);
    const schemaPath = /schema: (.*)/.exec(result.stderr)![1]!.trim();
    expect(readFileSync(schemaPath, 'utf8')).toMatch(/namespace Interlock/);

    const cedar = project({ file: 'policy.cedar' });
    cedar.write('policy.cedar', result.stdout);
    const check = async (resource: string, args?: object) => {
      const extra = args === undefined ? [] : ['--args', JSON.stringify(args)];
      return json(await runCli(['check', resource, ...extra, '--json'], { cwd: cedar.dir }));
    };
    expect(await check('mcp:notes:read_note')).toMatchObject({
      verdict: 'allowed',
      rule: { id: 'notes-read' },
    });
    expect(await check('mcp:notes:read_secret')).toMatchObject({
      verdict: 'denied',
      effect: 'deny',
      rule: { id: 'no-secret' },
    });
    expect(await check('mcp:notes:write_note', { folder: 'drafts' })).toMatchObject({ verdict: 'allowed' });
    expect(await check('mcp:notes:write_note', { folder: 'final' })).toMatchObject({ verdict: 'denied' });
  });

  it('writes to a file with --out, and says what it did in --json', async () => {
    const native = project(POLICY);
    const result = await runCli(['policy', 'export', '--cedar', '--out', 'exported.cedar', '--json'], {
      cwd: native.dir,
    });
    expect(result.code).toBe(0);
    const doc = json(result) as { format: string; file: string; schema: string };
    expect(doc).toMatchObject({ format: 'cedar' });
    expect(readFileSync(doc.file, 'utf8')).toMatch(/@id\("drafts"\)/);
  });

  it('refuses a rule with no Cedar form, naming the rule (exit 2)', async () => {
    const quota = project({
      version: 1,
      rules: [
        {
          id: 'search-budget',
          effect: 'allow',
          resource: 'mcp:web:search',
          actions: 'execute',
          maxCalls: 10,
        },
      ],
    });
    const result = await runCli(['policy', 'export', '--cedar'], { cwd: quota.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Rule 'search-budget' \(rules\[0\]\) has no Cedar form: it has a quota/);
    expect(result.stdout).toBe('');
  });

  it('needs a format', async () => {
    const native = project(POLICY);
    const result = await runCli(['policy', 'export'], { cwd: native.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--cedar/);
  });
});

describe('a Cedar policy in the project file', { timeout: 120_000 }, () => {
  it('is refused at load with Cedar own message when it does not type-check (exit 2)', async () => {
    const bad = project({
      cedar: 'permit (principal, action, resource is Interlock::Tool) when { resource.owner == "me" };',
    });
    const result = await runCli(['check', 'mcp:notes:read', '--json'], { cwd: bad.dir });
    expect(result.code).toBe(2);
    // With --json the error is the JSON document on stdout.
    const said = result.stdout + result.stderr;
    expect(said).toMatch(/policy\.cedar/);
    expect(said).toMatch(/does not type-check.*owner/);
  });

  it('decides inline, naming the policy @id', async () => {
    const inline = project({
      cedar: '@id("all-notes") permit (principal, action, resource in Interlock::Server::"notes");',
    });
    const result = await runCli(['check', 'mcp:notes:anything', '--json'], { cwd: inline.dir });
    expect(result.code).toBe(0);
    expect(json(result)).toMatchObject({ verdict: 'allowed', rule: { id: 'all-notes' } });
  });
});
