/**
 * Issue 18, items 4 and 8, as a real process: `interlock tools <name>` shows one tool of a real npm server
 * (server-filesystem) with its arguments rendered, `--json` carries the schemas, and denials give CLI fixes
 * (the rule to add, as the file is written) instead of library calls.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../helpers/fixtures.js';
import { allGone, type CliResult, json, runCli, type TempProject, tempProject } from './helpers.js';

const require = createRequire(import.meta.url);
const FILESYSTEM_BIN = join(
  dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json')),
  'dist/index.js',
);

let project: TempProject;
const results: CliResult[] = [];

beforeAll(() => {
  project = tempProject();
  project.write('data/notes.txt', 'hello\n');
  project.write('interlock.config.yaml', {
    mcpServers: {
      fs: { command: process.execPath, args: [FILESYSTEM_BIN, join(project.dir, 'data')] },
      echo: { command: process.execPath, args: [fixture('echo')], env: { FIXTURE_LOG: project.log } },
    },
    policy: {
      version: 1,
      rules: [{ id: 'fs-read', effect: 'allow', resource: 'mcp:fs:read_*', actions: 'execute' }],
    },
  });
});

afterAll(() => project.close());

afterEach(async () => {
  const pids = [...project.fixturePids(), ...results.splice(0).flatMap((r) => r.descendants)];
  expect(await allGone(pids)).toEqual([]);
});

async function cli(args: string[], cwd = project.dir): Promise<CliResult> {
  const result = await runCli(args, { cwd });
  results.push(result);
  return result;
}

describe('interlock tools <name>', () => {
  it('shows one tool: its arguments with nested fields indented, the verdict and the rule to add', async () => {
    const result = await cli(['tools', 'fs/edit_file']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('mcp__fs__edit_file');
    expect(result.stdout).toMatch(/^server {4}fs {2}\(tool 'edit_file' there\)$/m);
    expect(result.stdout).toMatch(/^verdict {3}DENIED {2}\(default-deny\)$/m);
    expect(result.stdout).toContain(
      [
        "reason    No rule allows 'execute' on 'mcp:fs:edit_file' (default deny).",
        'hint      to allow it, add this rule to policy.rules in interlock.config.yaml:',
        '          - effect: allow',
        '            resource: mcp:fs:edit_file',
        '            actions: execute',
      ].join('\n'),
    );
    expect(result.stdout).toContain('Make line-based edits to a text file.');
    // The arguments, as server-filesystem declares them: an array of objects, its fields one level in.
    expect(result.stdout).toContain(
      [
        'Arguments:',
        '  NAME       TYPE             REQUIRED  DESCRIPTION',
        '  path       string           required',
        '  edits      array of object  required',
        '    oldText  string           required  Text to search for - must match exactly',
        '    newText  string           required  Text to replace with',
        '  dryRun     boolean          optional  Preview changes using git-style diff format (default: false)',
      ].join('\n'),
    );
    expect(result.servers.length).toBeGreaterThan(0);
    expect(result.stdout).not.toContain('mcp__echo__'); // only the named server was started
  });

  it('shows an enum as its values, with the default, for the exposed name and through describe', async () => {
    const byName = await cli(['tools', 'mcp__fs__list_directory_with_sizes']);
    expect(byName.code).toBe(0);
    expect(byName.stdout).toMatch(
      /^ {2}sortBy +"name" \| "size" +optional +Sort entries by name or size \(default: "name"\)$/m,
    );
    expect(byName.stdout).toMatch(/^verdict {3}DENIED/m);
    // The tool's own name is enough when one server has it.
    const described = await cli(['describe', 'read_text_file']);
    expect(described.code).toBe(0);
    expect(described.stdout.split('\n')[0]).toBe('mcp__fs__read_text_file');
    expect(described.stdout).toMatch(/^verdict {3}ALLOWED {2}\(allow, rule fs-read\)$/m);
    expect(described.stdout).toMatch(
      /^ {2}head +number +optional +If provided, returns only the first N lines of the file$/m,
    );
  });

  it('says which tool was meant when the name is misspelt (exit 2)', async () => {
    const result = await cli(['tools', 'fs/edit_fil']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      "error: No tool named 'fs/edit_fil'. Did you mean 'mcp__fs__edit_file'?\n" +
        "  hint: tools are named mcp__{server}__{tool}; 'interlock tools' lists them\n",
    );
    // A gated call names exactly what it calls: the other forms are suggested, not taken.
    const call = await cli(['call', 'fs/read_text_file', '--args', '{"path":"notes.txt"}']);
    expect(call.code).toBe(2);
    expect(call.stderr).toContain(
      "error: No tool named 'fs/read_text_file'. Did you mean 'mcp__fs__read_text_file'?\n",
    );
  });

  it('prints the input and output schemas with --json, for one tool and for the list', async () => {
    const one = json<{ tool: Record<string, unknown> }>(await cli(['tools', 'fs:edit_file', '--json']));
    expect(one.tool).toMatchObject({
      name: 'mcp__fs__edit_file',
      server: 'fs',
      tool: 'edit_file',
      verdict: 'denied',
      reason: "No rule allows 'execute' on 'mcp:fs:edit_file' (default deny).",
      inputSchema: {
        type: 'object',
        required: expect.arrayContaining(['path', 'edits']),
        properties: expect.objectContaining({ dryRun: expect.objectContaining({ default: false }) }),
      },
      outputSchema: expect.objectContaining({ type: 'object' }),
    });
    expect(String(one.tool.hint)).toContain('- effect: allow\n  resource: mcp:fs:edit_file');
    const list = json<{ tools: { name: string; inputSchema: unknown; reason: string }[] }>(
      await cli(['tools', '--server', 'echo', '--json']),
    );
    const echo = list.tools.find((t) => t.name === 'mcp__echo__echo');
    expect(echo?.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } } });
    expect(list.tools.every((t) => !t.reason.includes('grant('))).toBe(true);
  });
});

describe('CLI fixes for denials', () => {
  it('gives the rule to add, in YAML, and says the reason once (exit 3)', async () => {
    const result = await cli(['call', 'mcp__echo__image']);
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      [
        "denied: No rule allows 'execute' on 'mcp:echo:image' (default deny).",
        '  hint: to allow it, add this rule to policy.rules in interlock.config.yaml:',
        '        - effect: allow',
        '          resource: mcp:echo:image',
        '          actions: execute',
        '',
      ].join('\n'),
    );
  });

  it('gives the rule in JSON for a JSON policy file, and a whole policy section when there is none', async () => {
    const other = tempProject();
    try {
      other.write('policy.json', { version: 1, rules: [] });
      other.write('interlock.config.json', {
        mcpServers: { echo: { command: process.execPath, args: [fixture('echo')] } },
        policy: { file: 'policy.json' },
      });
      const denied = await cli(['call', 'mcp__echo__echo', '--args', '{"text":"x"}'], other.dir);
      expect(denied.code).toBe(3);
      expect(denied.stderr).toContain(
        '  hint: to allow it, add this rule to the rules in policy.json:\n' +
          '        { "effect": "allow", "resource": "mcp:echo:echo", "actions": "execute" }\n',
      );
      const json3 = json<{ error: Record<string, unknown> }>(
        await cli(['call', 'mcp__echo__echo', '--args', '{"text":"x"}', '--json'], other.dir),
      );
      expect(json3.error).toMatchObject({
        code: 'CAPABILITY_DENIED',
        suggestedRule: { effect: 'allow', resource: 'mcp:echo:echo', actions: 'execute' },
      });
      expect(JSON.stringify(json3)).not.toContain('grant(');

      other.write('interlock.config.json', {
        mcpServers: { echo: { command: process.execPath, args: [fixture('echo')] } },
      });
      const noPolicy = await cli(['check', 'mcp__echo__echo'], other.dir);
      expect(noPolicy.code).toBe(3);
      expect(noPolicy.stdout).toContain(
        'hint      to allow it, add this rule to interlock.config.json (it has no policy yet):\n' +
          '          "policy": { "version": 1, "rules": [{ "effect": "allow", "resource": "mcp:echo:echo", "actions": "execute" }] }\n',
      );
    } finally {
      other.close();
    }
  });

  it('says how to approve an ask rule, and names the deny rule to change', async () => {
    const other = tempProject();
    try {
      other.write('interlock.config.yaml', {
        mcpServers: { echo: { command: process.execPath, args: [fixture('echo')] } },
        policy: {
          version: 1,
          rules: [
            { id: 'pid-ask', effect: 'ask', resource: 'mcp:echo:pid', actions: 'execute' },
            { id: 'no-env', effect: 'deny', resource: 'mcp:echo:get_env', actions: '*' },
          ],
        },
      });
      const asked = await cli(['call', 'mcp__echo__pid'], other.dir);
      expect(asked.code).toBe(3);
      expect(asked.stderr).toMatch(
        /^denied: Needs approval: rule 'pid-ask' \(mcp:echo:pid\) asks a human first/,
      );
      expect(asked.stderr).toContain(
        "  hint: run it on a terminal to approve it (interlock call asks only when stdin and stderr are a terminal, without --json), or make rule 'pid-ask' 'effect: allow' in interlock.config.yaml\n",
      );
      const denied = await cli(['check', 'mcp:echo:get_env'], other.dir);
      expect(denied.code).toBe(3);
      expect(denied.stdout).toContain(
        "hint      deny rules win over allow rules: to allow it, remove rule 'no-env' from interlock.config.yaml or narrow its resource\n",
      );
    } finally {
      other.close();
    }
  });

  it('points an argument that does not fit the schema at the tool description', async () => {
    const result = await cli(['call', 'mcp__fs__read_text_file', '--args', '{"pth":"notes.txt"}']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: Invalid arguments for tool 'mcp__fs__read_text_file'/);
    expect(result.stderr).toContain(
      "  hint: 'interlock tools mcp__fs__read_text_file' shows its arguments\n",
    );
  });

  it('ends a usage error with the same hint style, naming the command', async () => {
    const result = await cli(['tools', '--bogus']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("error: unknown option '--bogus'\n  hint: see 'interlock tools --help'\n");
  });
});

describe('a stdio server that does not speak MCP on stdout (issue 18, item 6)', () => {
  it('fails its connect fast in interlock servers, quoting the line, while the others connect', async () => {
    const other = tempProject();
    try {
      other.write('interlock.config.yaml', {
        mcpServers: {
          web: {
            command: process.execPath,
            args: [
              '-e',
              "console.log('Server listening on http://localhost:8000'); setInterval(() => {}, 1000)",
            ],
            // A minute: the command can only finish in time if the connect fails fast.
            connectTimeoutMs: 60_000,
          },
          echo: { command: process.execPath, args: [fixture('echo')], env: { FIXTURE_LOG: other.log } },
        },
      });
      const result = await runCli(['servers'], { cwd: other.dir, timeoutMs: 30_000 });
      results.push(result);
      expect(result.signal).toBeNull();
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(
        /^web +stdio +- +failed +- +\S+ s +Server 'web' failed to connect: it wrote/m,
      );
      expect(result.stdout).toMatch(/^echo +stdio +2025-11-25 +ready +15 /m);
      // In full below the table: the line, and what to check.
      expect(result.stdout).toContain(
        `web: Server 'web' failed to connect: it wrote a line to stdout that is not an MCP message, and no MCP message followed within 3000 ms: "Server listening on http://localhost:8000". A stdio server must write only JSON-RPC messages to stdout: check that the command and its arguments start it in stdio mode, and that it logs to stderr.`,
      );
      expect(await allGone(other.fixturePids())).toEqual([]);
    } finally {
      other.close();
    }
  });
});
