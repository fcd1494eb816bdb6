/**
 * `main(argv, io)` in-process, for what a pipe cannot show: terminal output (colors, spinner, NO_COLOR,
 * control characters from servers), approval prompts on a terminal, and the finer cases of `call` and
 * `check`. Real servers all the same: the echo fixture over stdio and Streamable HTTP.
 */
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { type HttpServerProcess, startHttpFixture } from '../helpers/http-fixtures.js';
import { descendantPids } from '../helpers/processes.js';
import { SECRET, type TempProject, tempProject, writeEchoProject } from './helpers.js';

let http: HttpServerProcess;
let project: TempProject;

beforeAll(async () => {
  http = await startHttpFixture({ transport: 'http' });
  project = tempProject();
  writeEchoProject(project, http.mcpUrl);
});

afterAll(async () => {
  await http.close();
  project.close();
});

afterEach(() => {
  // Every server a command started is gone when main() resolves (the HTTP fixture is this file's own).
  const mine = new Set([http.pid, ...descendantPids(http.pid)]);
  expect(descendantPids(process.pid).filter((pid) => !mine.has(pid))).toEqual([]);
});

interface RunOptions {
  env?: Record<string, string | undefined>;
  /** Both stdout and stderr are terminals. */
  tty?: boolean;
  /** Text on stdin; a terminal when `tty` is set. */
  stdin?: string;
}

async function run(args: string[], options: RunOptions = {}) {
  let stdout = '';
  let stderr = '';
  const tty = options.tty === true;
  const stdin =
    options.stdin === undefined ? undefined : Object.assign(Readable.from([options.stdin]), { isTTY: tty });
  const code = await main(args, {
    stdout: { write: (c: string) => (stdout += c), isTTY: tty, columns: 120 },
    stderr: { write: (c: string) => (stderr += c), isTTY: tty, columns: 120 },
    stdin,
    env: { ...process.env, NO_COLOR: undefined, CLI_TEST_SECRET: SECRET, ...options.env },
    cwd: project.dir,
  });
  return { code, stdout, stderr };
}

describe('terminal output', () => {
  it('draws a spinner per server on a terminal and colors the table', async () => {
    const result = await run(['servers'], { tty: true });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('\u001b[?25l'); // cursor hidden while drawing ...
    expect(result.stderr).toContain('\u001b[?25h'); // ... and shown again
    expect(result.stderr).toContain('\u001b[2K'); // lines redrawn in place
    expect(result.stderr).toMatch(/echo\s+stdio\s+connected in/);
    expect(result.stdout).toContain('\u001b[32mready'); // green
    expect(result.stdout).toContain('\u001b[1mNAME'); // bold header
  });

  it('writes no colors with NO_COLOR or --no-color, even on a terminal', async () => {
    for (const result of [
      await run(['tools', '--server', 'remote'], { tty: true, env: { NO_COLOR: '1' } }),
      await run(['tools', '--server', 'remote', '--no-color'], { tty: true }),
    ]) {
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/mcp__remote__echo\s+remote\s+allowed/);
      expect(result.stdout).not.toContain('\u001b[');
    }
  });

  it('shows control characters a server sends as visible text on a terminal, raw when piped', async () => {
    const args = ['call', 'mcp__echo__echo', '--args', JSON.stringify({ text: 'red \u001b[31mtext' })];
    const terminal = await run(args, { tty: true });
    expect(terminal.stdout).toBe('red \\x1b[31mtext\n');
    const piped = await run(args);
    expect(piped.stdout).toBe('red \u001b[31mtext\n');
  });

  it('asks on the terminal when an ask rule decides, and calls only after a yes', async () => {
    const yes = await run(['call', 'mcp__echo__pid'], { tty: true, stdin: 'y\n' });
    expect(yes.stderr).toContain('approval needed:');
    expect(yes.stderr).toContain("Allow 'execute' on 'mcp:echo:pid' once? [y/N]");
    expect(yes.code).toBe(0);
    expect(yes.stdout).toMatch(/^\d+\n$/);
    const no = await run(['call', 'mcp__echo__pid'], { tty: true, stdin: 'n\n' });
    expect(no.code).toBe(3);
    expect(no.stdout).toBe('');
  });
});

describe('call', () => {
  it('reads the arguments from a file or from stdin', async () => {
    project.write('args.json', { text: 'from a file' });
    expect(await run(['call', 'mcp__echo__echo', '--args-file', 'args.json'])).toMatchObject({
      code: 0,
      stdout: 'from a file\n',
    });
    expect(
      await run(['call', 'mcp__echo__echo', '--args-file', '-'], { stdin: '{"text":"from stdin"}' }),
    ).toMatchObject({ code: 0, stdout: 'from stdin\n' });
  });

  it('says which argument a conditional rule wanted when it denies', async () => {
    const denied = await run(['call', 'mcp__echo__add', '--args', '{"a":50,"b":1}']);
    expect(denied.code).toBe(3);
    expect(denied.stderr).toContain("hint: Rule 'add-small' allows it only when a <= 10.");
    const data = await run(['call', 'mcp__echo__add', '--args', '{"a":50,"b":1}', '--json']);
    expect(JSON.parse(data.stdout)).toMatchObject({
      error: {
        code: 'CAPABILITY_DENIED',
        hint: "Rule 'add-small' allows it only when a <= 10.",
        exitCode: 3,
      },
    });
    expect(await run(['call', 'mcp__echo__add', '--args', '{"a":5,"b":1}'])).toMatchObject({
      code: 0,
      stdout: '6\n',
    });
  });

  it('treats an ask rule as a denial when nobody can be asked', async () => {
    const result = await run(['call', 'mcp__echo__pid']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("denied: Needs approval: rule 'pid-ask'");
  });

  it('exits 1 when the tool reports an error, and prints it', async () => {
    const result = await run(['call', 'mcp__echo__fail', '--args', '{"message":"it broke"}']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('it broke');
  });

  it('exits 2 for arguments that do not fit the schema, and for an unknown tool, with a suggestion', async () => {
    const bad = await run(['call', 'mcp__echo__echo', '--args', '{"text":5}', '--json']);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout)).toMatchObject({
      error: { code: 'INVALID_TOOL_INPUT', issues: [expect.objectContaining({ field: '/text' })] },
    });
    const unknown = await run(['call', 'mcp__echo__ecoh']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("No tool named 'mcp__echo__ecoh'. Did you mean 'mcp__echo__echo'?");
  });

  it('masks a secret in --json output too', async () => {
    const result = await run(['call', 'mcp__echo__get_env', '--args', '{"name":"SECRET_TOKEN"}', '--json']);
    expect(JSON.parse(result.stdout)).toMatchObject({ text: '***' });
    expect(result.stdout + result.stderr).not.toContain(SECRET);
  });
});

describe('check', () => {
  it('evaluates conditions only when the arguments are given', async () => {
    const open = await run(['check', 'mcp__echo__add', '--json']);
    expect(open.code).toBe(3);
    expect(JSON.parse(open.stdout)).toMatchObject({
      verdict: 'conditional',
      allowed: false,
      rule: { id: 'add-small' },
    });
    const ok = await run(['check', 'mcp__echo__add', '--args', '{"a":1,"b":2}', '--json']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ verdict: 'allowed', allowed: true, inputIssues: [] });
    const no = await run(['check', 'mcp__echo__add', '--args', '{"a":11,"b":2}']);
    expect(no.code).toBe(3);
    expect(no.stdout).toMatch(/hint\s+Rule 'add-small' allows it only when a <= 10\./);
  });

  it('reports arguments that do not fit the schema (exit 2) for an allowed tool', async () => {
    const result = await run(['check', 'mcp__echo__echo', '--args', '{"txt":"x"}', '--json']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({
      verdict: 'allowed',
      inputIssues: [expect.any(Object)],
    });
  });

  it('explains a denial by rule, and an ask, without arguments', async () => {
    const denied = await run(['check', 'mcp__echo__throw']);
    expect(denied.code).toBe(3);
    expect(denied.stdout).toMatch(/verdict\s+DENIED\s+\(deny\)/);
    expect(denied.stdout).toMatch(/rule\s+no-throw \(deny mcp:echo:throw\): never throw/);
    const ask = await run(['check', 'mcp:echo:pid', '--json']);
    expect(JSON.parse(ask.stdout)).toMatchObject({ verdict: 'ask', effect: 'ask', rule: { id: 'pid-ask' } });
  });
});
