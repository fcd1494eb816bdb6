// `interlock policy check` (issue 40 item 5), in a real process: what no request could ever allow, per principal,
// from a real connected server (the echo fixture) or, offline, from the pin file; rules that can never match; and
// exit 4 for those only with --strict.
import { afterEach, describe, expect, it } from 'vitest';
import { toolDefinitionHash } from '../../src/security/pinning.js';
import { fixture } from '../helpers/fixtures.js';
import { json, ROOT, runCli, type TempProject, tempProject } from './helpers.js';

let project: TempProject;
afterEach(() => project?.close());

const ECHO_RULES = [
  { id: 'echo-tools', effect: 'allow', resource: 'mcp:echo:*', actions: 'execute' },
  { id: 'no-throw', effect: 'deny', resource: 'mcp:echo:throw', actions: '*' },
  { id: 'throw-anyway', effect: 'allow', resource: 'mcp:echo:throw', actions: 'execute' },
  { id: 'typo', effect: 'allow', resource: 'mcp:echo:ecko', actions: 'execute' },
  { id: 'may-sample', effect: 'allow', resource: 'mcp:echo:sampling', actions: 'request' },
  { id: 'greeting', effect: 'allow', resource: 'mcp-resource:echo:fixture://greeting', actions: 'read' },
];

function echoProject(): string {
  project = tempProject();
  return project.write('interlock.config.yaml', {
    mcpServers: { echo: { command: process.execPath, args: [fixture('echo')] } },
    policy: { version: 1, rules: ECHO_RULES },
  });
}

/** A pin file for `notes` (read_note read-only, delete_note) and none for `other`; neither server can start. */
function offlineProject(extra: object = {}): string {
  project = tempProject();
  const read = { name: 'read_note', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } };
  const del = { name: 'delete_note', inputSchema: { type: 'object' } };
  project.write('.interlock/pins.json', {
    version: 1,
    pins: { notes: { read_note: toolDefinitionHash(read), delete_note: toolDefinitionHash(del) } },
    definitions: { notes: { read_note: read, delete_note: del } },
  });
  return project.write('interlock.config.yaml', {
    mcpServers: {
      notes: { command: '/nonexistent/notes-server' },
      other: { command: '/nonexistent/other-server' },
    },
    policy: {
      version: 1,
      rules: [
        { id: 'notes', effect: 'allow', resource: 'mcp:notes:*', actions: 'execute' },
        { id: 'no-delete', effect: 'deny', resource: 'mcp:notes:delete_note', actions: 'execute' },
        { id: 'raed', effect: 'allow', resource: 'mcp:notes:raed_note', actions: 'execute' },
        { id: 'other-x', effect: 'allow', resource: 'mcp:other:x', actions: 'execute' },
      ],
    },
    ...extra,
  });
}

// Each case starts the CLI as a process (and a server); on a loaded machine that takes a while.
describe('interlock policy check', { timeout: 120_000 }, () => {
  it("lists what the connected server's tools, resources and requests could never get, and dead rules", async () => {
    echoProject();
    const result = await runCli(['policy', 'check'], { cwd: project.dir });
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toContain('servers: echo (connected)');
    expect(out).toMatch(/tool +mcp:echo:throw \(execute\) +denied by rule 'no-throw'/);
    expect(out).toMatch(/server-request +mcp:echo:roots \(request\) +no allow or ask rule could apply/);
    expect(out).toMatch(/resource +mcp-resource:echo:fixture:\/\/blob \(read\)/);
    expect(out).toMatch(/prompt +mcp-prompt:echo:greet \(get\)/);
    // Allowed by some rule: never listed as "never".
    expect(out).not.toMatch(/mcp:echo:echo \(execute\)/);
    expect(out).not.toMatch(/mcp:echo:sampling/);
    expect(out).not.toMatch(/fixture:\/\/greeting/);
    expect(out).toContain(
      "'throw-anyway' (allow mcp:echo:throw execute)  shadowed: deny 'no-throw' (deny mcp:echo:throw *)",
    );
    expect(out).toContain("'typo' (allow mcp:echo:ecko execute)  dead: matches no tool or server request");
    expect(out.trimEnd().split('\n').at(-1)).toMatch(
      /^1 principal: \d+ never allowed, 2 rules that can never match$/,
    );
  });

  it('exits 4 with --strict when a rule can never match, and says it all in JSON', async () => {
    echoProject();
    const result = await runCli(['--json', 'policy', 'check', '--strict'], { cwd: project.dir });
    expect(result.code).toBe(4);
    const doc = json<{
      servers: Record<string, string>;
      principals: {
        principal: string;
        neverAllowed: { resource: string; effect: string; rule: string | null }[];
      }[];
      rules: object[];
    }>(result);
    expect(doc.servers).toEqual({ echo: 'connected' });
    expect(doc.principals).toHaveLength(1);
    expect(doc.principals[0]?.principal).toBe("agent 'interlock-cli'");
    expect(doc.principals[0]?.neverAllowed).toContainEqual(
      expect.objectContaining({ resource: 'mcp:echo:throw', effect: 'deny', rule: 'no-throw' }),
    );
    expect(doc.rules).toEqual([
      {
        scope: 'policy',
        rule: 'throw-anyway',
        effect: 'allow',
        pattern: 'mcp:echo:throw',
        finding: 'shadowed',
        by: 'no-throw',
      },
      { scope: 'policy', rule: 'typo', effect: 'allow', pattern: 'mcp:echo:ecko', finding: 'dead', by: null },
    ]);
  });

  it('takes the tools the project exposes: a tool its filter hides is nowhere, and a rule for it is dead', async () => {
    project = tempProject();
    project.write('interlock.config.yaml', {
      mcpServers: { echo: { command: process.execPath, args: [fixture('echo')], tools: { deny: ['add'] } } },
      policy: {
        version: 1,
        rules: [
          { id: 'echo', effect: 'allow', resource: 'mcp:echo:echo', actions: 'execute' },
          { id: 'add', effect: 'allow', resource: 'mcp:echo:add', actions: 'execute' },
        ],
      },
    });
    const result = await runCli(['--json', 'policy', 'check'], { cwd: project.dir });
    expect(result.code).toBe(0);
    const doc = json<{ principals: { neverAllowed: { resource: string }[] }[]; rules: object[] }>(result);
    const never = doc.principals[0]?.neverAllowed.map((n) => n.resource);
    expect(never).toContain('mcp:echo:fail');
    expect(never).not.toContain('mcp:echo:add');
    expect(doc.rules).toEqual([expect.objectContaining({ rule: 'add', finding: 'dead' })]);
  });

  it('works offline from the pin file, and calls nothing dead on a server it knows nothing of', async () => {
    offlineProject();
    const result = await runCli(['--json', 'policy', 'check', '--offline', '--strict'], { cwd: project.dir });
    expect(result.code).toBe(4);
    const doc = json<{
      servers: object;
      principals: { neverAllowed: { resource: string }[] }[];
      rules: object[];
    }>(result);
    expect(doc.servers).toEqual({ notes: 'pins', other: 'unknown' });
    const never = doc.principals[0]?.neverAllowed.map((n) => n.resource);
    expect(never).toContain('mcp:notes:delete_note');
    expect(never).not.toContain('mcp:notes:read_note');
    expect(doc.rules).toEqual([expect.objectContaining({ rule: 'raed', finding: 'dead' })]);
    expect(result.stderr).toContain("server 'other': its tools are unknown");
  });

  it('falls back to the pins of a server that does not connect', async () => {
    offlineProject();
    const result = await runCli(['policy', 'check'], { cwd: project.dir });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("server 'notes' did not connect");
    expect(result.stdout).toContain('servers: notes (pins), other (unknown)');
    expect(result.stdout).toMatch(/tool +mcp:notes:delete_note \(execute\) +denied by rule 'no-delete'/);
  });

  it("checks each of the gateway's principal bindings against the set the gateway derives for it", async () => {
    offlineProject({
      gateway: {
        principals: [
          {
            match: { stdio: { subjects: ['local'] } },
            rules: [
              { id: 'local-reads', effect: 'allow', resource: 'mcp:notes:read_note', actions: 'execute' },
            ],
          },
          {
            match: { apiKey: { subjects: ['ci'] } },
            rules: [
              { id: 'ci-all', effect: 'allow', resource: 'mcp:notes:*', actions: 'execute' },
              { id: 'ci-deleted', effect: 'allow', resource: 'mcp:notes:delete_note', actions: 'execute' },
            ],
          },
        ],
      },
    });
    const result = await runCli(['--json', 'policy', 'check', '--offline'], { cwd: project.dir });
    expect(result.code).toBe(0);
    const doc = json<{
      principals: { principal: string; neverAllowed: { resource: string; rule: string | null }[] }[];
      rules: { scope: string; rule: string; finding: string; by: string | null }[];
    }>(result);
    const tools = (i: number) =>
      doc.principals[i]?.neverAllowed.filter(
        (n) => n.resource.startsWith('mcp:notes:') && !/elicitation|sampling|roots/.test(n.resource),
      );
    expect(doc.principals.map((p) => p.principal)).toEqual([
      'principals[0] {"stdio":{"subjects":["local"]}}',
      'principals[1] {"apiKey":{"subjects":["ci"]}}',
    ]);
    // The first binding allows only read_note; the project's deny reaches the second one's wider allow.
    expect(tools(0)).toEqual([
      expect.objectContaining({ resource: 'mcp:notes:delete_note', effect: 'default-deny', rule: null }),
    ]);
    expect(tools(1)).toEqual([
      expect.objectContaining({ resource: 'mcp:notes:delete_note', effect: 'deny', rule: 'no-delete' }),
    ]);
    expect(doc.rules).toContainEqual({
      scope: 'principals[1]',
      rule: 'ci-deleted',
      effect: 'allow',
      pattern: 'mcp:notes:delete_note',
      finding: 'shadowed',
      by: 'no-delete',
    });
  });

  it('refuses an --at that is not a time (exit 2)', async () => {
    offlineProject();
    const result = await runCli(['policy', 'check', '--offline', '--at', 'tomorrow'], { cwd: project.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--at 'tomorrow' is not an ISO 8601 time");
  });

  it("reports the guide's sample as the policy lifecycle guide shows it", async () => {
    const file = 'docs/snippets/policy-lifecycle/interlock.config.yaml';
    const result = await runCli(['--config', file, 'policy', 'check', '--strict'], { cwd: ROOT });
    expect(result.code).toBe(4);
    expect(result.stdout).toMatch(/tool +mcp:notes:list_notes \(execute\) +no allow or ask rule could apply/);
    expect(result.stdout).toContain(
      "'no-private-notes' (deny mcp:notes:read_private *)  dead: matches no tool or server request",
    );
    expect(result.stdout).toContain('could be allowed: 3 tools, 0 resources');
  });
});
