/**
 * Each command as a real process against real servers: the echo fixture over stdio (spawned by the CLI) and
 * over Streamable HTTP (started here). Checks the output, `--json` documents, exit codes, the audit file,
 * masked secrets, and that no process the CLI started outlives it.
 */
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../helpers/fixtures.js';
import { type HttpServerProcess, startHttpFixture } from '../helpers/http-fixtures.js';
import {
  allGone,
  type CliResult,
  json,
  runCli,
  SECRET,
  type TempProject,
  tempProject,
  writeEchoProject,
} from './helpers.js';

let http: HttpServerProcess;
let project: TempProject;
const results: CliResult[] = [];

beforeAll(async () => {
  http = await startHttpFixture({ transport: 'http' });
  project = tempProject();
  writeEchoProject(project, http.mcpUrl);
});

afterAll(async () => {
  await http.close();
  project.close();
});

/** Runs the CLI in the project and keeps the result for the leftover check. */
async function cli(args: string[], options: { input?: string; env?: Record<string, string> } = {}) {
  const result = await runCli(args, {
    cwd: project.dir,
    env: { CLI_TEST_SECRET: SECRET, ...options.env },
    ...(options.input === undefined ? {} : { input: options.input }),
  });
  results.push(result);
  return result;
}

afterEach(async () => {
  // No process any command started outlives it: fixture servers (by their logged pids) and all descendants.
  const pids = [...project.fixturePids(), ...results.splice(0).flatMap((r) => r.descendants)];
  expect(await allGone(pids)).toEqual([]);
});

describe('interlock servers', () => {
  it('connects every server, shows progress on stderr and a table on stdout, exit 0', async () => {
    const result = await cli(['servers']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/echo \(stdio\): connecting/);
    expect(result.stderr).toMatch(/remote \(http\): connected in .*, 15 tools/);
    expect(result.stdout).toMatch(/NAME\s+TRANSPORT\s+PROTOCOL\s+STATE\s+TOOLS\s+CONNECT\s+ERROR/);
    expect(result.stdout).toMatch(/echo\s+stdio\s+2025-11-25\s+ready\s+15/);
    expect(result.stdout).not.toContain('\u001b['); // not a terminal: no colors, no cursor movement
  });

  it('prints one JSON document with --json and no progress', async () => {
    const result = await cli(['servers', '--json']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const { servers } = json<{ servers: Record<string, unknown>[] }>(result);
    expect(servers).toEqual([
      expect.objectContaining({
        name: 'echo',
        transport: 'stdio',
        protocol: '2025-11-25',
        state: 'ready',
        tools: 15,
        error: null,
      }),
      expect.objectContaining({
        name: 'remote',
        transport: 'http',
        protocol: '2025-11-25',
        state: 'ready',
        tools: 15,
        error: null,
      }),
    ]);
    expect(servers[0]?.connectMs).toEqual(expect.any(Number));
  });

  it('exits 1 when a server fails, with its error in the table, and shows disabled servers', async () => {
    const broken = tempProject();
    try {
      broken.write('interlock.config.json', {
        mcpServers: {
          good: { command: process.execPath, args: [fixture('echo')], env: { FIXTURE_LOG: broken.log } },
          broken: { command: process.execPath, args: [fixture('exit-at-start')] },
          off: { command: 'does-not-exist', disabled: true },
        },
      });
      const result = await runCli(['servers', '--json'], { cwd: broken.dir });
      results.push(result);
      expect(result.code).toBe(1);
      const { servers } = json<{
        servers: { name: string; state: string; error: { message: string } | null }[];
      }>(result);
      expect(servers.map((s) => [s.name, s.state])).toEqual([
        ['good', 'ready'],
        ['broken', 'failed'],
        ['off', 'disabled'],
      ]);
      expect(servers[1]?.error?.message).toContain('cannot open database');
      const text = await runCli(['servers'], { cwd: broken.dir });
      results.push(text);
      expect(text.code).toBe(1);
      expect(text.stdout).toMatch(
        // The connect time is shown in ms, or in s from one second on (a slow machine).
        /broken\s+stdio\s+-\s+failed\s+-\s+\S+ m?s\s+Server 'broken' failed to connect/,
      );
      expect(text.stdout).toContain('cannot open database'); // the server's stderr, after the table
      expect(text.stdout).toMatch(/off\s+stdio\s+-\s+disabled/);
      expect(await allGone(broken.fixturePids())).toEqual([]);
    } finally {
      broken.close();
    }
  });
});

describe('interlock tools', () => {
  it("lists every tool with its server, description and the policy's verdict and rule", async () => {
    const result = await cli(['tools', '--json']);
    expect(result.code).toBe(0);
    const { tools } = json<{
      tools: { name: string; verdict: string; rule: { id: string } | null; server: string }[];
    }>(result);
    const verdict = (name: string) => {
      const tool = tools.find((t) => t.name === name);
      return [tool?.verdict, tool?.rule?.id ?? null];
    };
    expect(verdict('mcp__echo__echo')).toEqual(['allowed', 'echo-allowed']);
    expect(verdict('mcp__echo__add')).toEqual(['conditional', 'add-small']);
    expect(verdict('mcp__echo__throw')).toEqual(['denied', 'no-throw']);
    expect(verdict('mcp__echo__pid')).toEqual(['ask', 'pid-ask']);
    expect(verdict('mcp__echo__image')).toEqual(['denied', null]);
    expect(verdict('mcp__remote__echo')).toEqual(['allowed', 'remote-echo']);
    expect(tools.find((t) => t.name === 'mcp__echo__echo')).toMatchObject({
      server: 'echo',
      description: 'Echoes the text back.',
    });
  });

  it('shows one server with --server, as a table', async () => {
    const result = await cli(['tools', '--server', 'remote']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/TOOL\s+SERVER\s+VERDICT\s+RULE\s+DESCRIPTION/);
    expect(result.stdout).toMatch(
      /mcp__remote__echo\s+remote\s+allowed\s+remote-echo\s+Echoes the text back\./,
    );
    expect(result.stdout).toMatch(/mcp__remote__add\s+remote\s+denied\s+\(default deny\)/);
    expect(result.stdout).not.toContain('mcp__echo__');
    expect(result.servers).toEqual([]); // the stdio server was never started
  });

  it('exits 2 for an unknown server, naming the known ones', async () => {
    const result = await cli(['tools', '--server', 'nope']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("No server named 'nope'");
    expect(result.stderr).toContain('echo, remote');
  });
});

describe('interlock call', () => {
  it('prints the result string of an allowed call and audits it, exit 0', async () => {
    const result = await cli(['call', 'mcp__echo__echo', '--args', '{"text":"audited value"}']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('audited value\n');
    // Every decision goes to the audit file, with the argument names but never their values.
    const lines = readFileSync(`${project.dir}/logs/audit.jsonl`, 'utf8').trim().split('\n');
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.find((r) => r.resource === 'mcp:echo:echo')).toMatchObject({
      resource: 'mcp:echo:echo',
      effect: 'allow',
      ruleId: 'echo-allowed',
      agent: 'interlock-cli',
      argumentKeys: ['text'],
    });
    expect(lines.join('\n')).not.toContain('audited value');
  });

  it('calls a remote server the same way, with --json', async () => {
    const result = await cli(['call', 'mcp__remote__echo', '--args', '{"text":"over http"}', '--json']);
    expect(result.code).toBe(0);
    expect(json(result)).toEqual({
      tool: 'mcp__remote__echo',
      server: 'remote',
      isError: false,
      text: 'over http',
    });
  });

  it('exits 3 for a denied call, with the reason and the rule, and sends nothing', async () => {
    const result = await cli(['call', 'mcp__echo__throw', '--args', '{}']);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe('');
    // The reason names the rule once; the hint is the change to make in the project file.
    expect(result.stderr).toBe(
      "denied: Denied by rule 'no-throw' (mcp:echo:throw): never throw.\n" +
        "  hint: deny rules win over allow rules: to allow it, remove rule 'no-throw' from interlock.config.yaml or narrow its resource\n",
    );
    const log = readFileSync(project.log, 'utf8');
    expect(log).not.toContain('"tool":"throw"');
  });

  it('reports a denial as JSON with --json', async () => {
    const result = await cli(['call', 'mcp__echo__throw', '--json']);
    expect(result.code).toBe(3);
    expect(json(result)).toEqual({
      error: expect.objectContaining({
        code: 'CAPABILITY_DENIED',
        resource: 'mcp:echo:throw',
        action: 'execute',
        rule: expect.objectContaining({ id: 'no-throw', effect: 'deny' }),
        exitCode: 3,
      }),
    });
  });

  it('never prints a secret expanded into a server env, even when a tool returns it', async () => {
    const result = await cli([
      'call',
      'mcp__echo__get_env',
      '--args',
      '{"name":"SECRET_TOKEN"}',
      '--verbose',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('***\n');
    expect(result.stdout + result.stderr).not.toContain(SECRET);
  });
});

describe('interlock check', () => {
  const auditLines = () => {
    try {
      return readFileSync(`${project.dir}/logs/audit.jsonl`, 'utf8').trim().split('\n').length;
    } catch {
      return 0;
    }
  };

  it('explains an allowed call, exit 0, without calling or auditing', async () => {
    const before = auditLines();
    const result = await cli(['check', 'mcp__echo__echo', '--args', '{"text":"x"}']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/verdict\s+ALLOWED/);
    expect(result.stdout).toMatch(/rule\s+echo-allowed \(allow mcp:echo:echo\)/);
    expect(result.stdout).toMatch(/arguments\s+match the input schema/);
    expect(auditLines()).toBe(before);
    expect(readFileSync(project.log, 'utf8')).not.toMatch(/"method":"tools\/call".*"args":\{"text":"x"\}/);
  });

  it('checks a resource against the policy alone, starting no server', async () => {
    const result = await cli(['check', 'mcp:echo:throw', '--json']);
    expect(result.code).toBe(3);
    expect(json(result)).toMatchObject({
      resource: 'mcp:echo:throw',
      action: 'execute',
      verdict: 'denied',
      effect: 'deny',
      rule: { id: 'no-throw' },
    });
    expect(result.servers).toEqual([]);
  });
});

describe('interlock pins', () => {
  it('pins on first use, reports changed definitions (exit 3), blocks them, and approves one', {
    timeout: 120_000,
  }, async () => {
    const pins = tempProject();
    const config = (suffix: string) => ({
      mcpServers: {
        echo: {
          command: process.execPath,
          args: [fixture('echo')],
          env: { FIXTURE_LOG: pins.log, FIXTURE_DESCRIPTION_SUFFIX: suffix },
        },
      },
      policy: { version: 1, rules: [{ effect: 'allow', resource: 'mcp:echo:echo', actions: 'execute' }] },
      pins: { file: 'state/pins.json' },
    });
    const run = async (args: string[]) => {
      const result = await runCli(args, { cwd: pins.dir });
      results.push(result);
      return result;
    };
    try {
      pins.write('interlock.config.yaml', config(''));
      const first = await run(['pins', '--json']);
      expect(first.code).toBe(0);
      const states = (r: CliResult) =>
        json<{ pins: { name: string; state: string }[] }>(r).pins.map((p) => [p.name, p.state]);
      expect(states(first)).toContainEqual(['mcp__echo__echo', 'new']);
      expect(JSON.parse(readFileSync(`${pins.dir}/state/pins.json`, 'utf8')).pins.echo.echo).toMatch(
        /^[0-9a-f]{64}$/,
      );
      const second = await run(['pins', '--json']);
      expect(states(second)).toContainEqual(['mcp__echo__echo', 'ok']);

      pins.write('interlock.config.yaml', config(' (changed)'));
      const changed = await run(['pins']);
      expect(changed.code).toBe(3);
      expect(changed.stdout).toMatch(
        /mcp__echo__echo\s+changed\s+[0-9a-f]{12}\s+now [0-9a-f]{12}: calls blocked/,
      );
      // The change is shown as a diff of the description before anything is approved.
      expect(changed.stdout).toMatch(/mcp__echo__echo changed \([0-9a-f]{12} -> [0-9a-f]{12}\):/);
      expect(changed.stdout).toMatch(/^ {2}- .*Echoes/m);
      expect(changed.stdout).toMatch(/^ {2}\+ .*Echoes.*\(changed\)/m);
      // Issue 39: `interlock pins` does not tell its user to run `interlock pins`; it names the approval.
      expect(changed.stdout + changed.stderr).not.toMatch(/with 'interlock pins'|run 'interlock pins'/);
      expect(changed.stderr).toMatch(
        /approve the change shown below: interlock pins --approve mcp__echo__echo --hash/,
      );
      const shown = /interlock pins --approve mcp__echo__echo --hash ([0-9a-f]{12})/.exec(
        changed.stdout,
      )?.[1];
      expect(shown).toBeDefined();
      const changedJson = json<{ pins: { name: string; currentHash: string; diff?: string[] }[] }>(
        await run(['pins', '--json']),
      ).pins.find((p) => p.name === 'mcp__echo__echo');
      expect(changedJson?.diff?.some((l) => l.startsWith('+ ') && l.includes('(changed)'))).toBe(true);
      const blocked = await run(['call', 'mcp__echo__echo', '--args', '{"text":"x"}']);
      expect(blocked.code).toBe(3);
      // CLI fixes, not library ones: the commands to run, in the warning on connect and under the error.
      expect(blocked.stderr).toContain(
        `warning: tool 'mcp__echo__echo' changed its definition since it was pinned; its calls are blocked until you review the change with 'interlock pins' and approve it: interlock pins --approve mcp__echo__echo --hash ${shown}\n`,
      );
      expect(blocked.stderr).toMatch(
        /^blocked: Tool 'mcp__echo__echo' changed its definition since it was pinned \([0-9a-f]{12} -> [0-9a-f]{12}\); its calls are blocked until the change is approved\.$/m,
      );
      expect(blocked.stderr).toContain(
        `  hint: review the change with 'interlock pins', then approve what you reviewed: interlock pins --approve mcp__echo__echo --hash ${shown}\n`,
      );
      expect(blocked.stderr).not.toMatch(/approveToolChange|manager\.|grant\(/);

      // Approval binds what was reviewed: no hash, or the hash of another definition, approves nothing.
      const noHash = await run(['pins', '--approve', 'mcp__echo__echo']);
      expect(noHash.code).toBe(2);
      expect(noHash.stderr).toContain(`--hash ${shown}`);
      const stale = await run(['pins', '--approve', 'mcp__echo__echo', '--hash', '0123456789ab']);
      expect(stale.code).toBe(2);
      expect(stale.stderr).toContain('review it again');
      pins.write('interlock.config.yaml', config(' (changed again)'));
      const moved = await run(['pins', '--approve', 'mcp__echo__echo', '--hash', shown as string]);
      expect(moved.code).toBe(2);
      pins.write('interlock.config.yaml', config(' (changed)'));

      const approve = await run(['pins', '--approve', 'mcp__echo__echo', '--hash', shown as string]);
      expect(approve.code).toBe(0);
      expect(approve.stdout).toContain('Approved the new definition of mcp__echo__echo');
      const after = await run(['call', 'mcp__echo__echo', '--args', '{"text":"approved"}']);
      expect(after.code).toBe(0);
      expect(after.stdout).toBe('approved\n');
      const again = await run(['pins', '--approve', 'mcp__echo__echo', '--hash', shown as string]);
      expect(again.code).toBe(2);
      expect(again.stderr).toContain('no changed definition to approve');
      expect(await allGone(pins.fixturePids())).toEqual([]);
    } finally {
      pins.close();
    }
  });
});
