/** Usage as a process: help, version, bad usage (exit 2) and a missing project file. No server is started. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, runCli, type TempProject, tempProject } from './helpers.js';

let empty: TempProject;

beforeAll(() => {
  empty = tempProject();
});
afterAll(() => empty.close());

const cli = (args: string[]) => runCli(args, { cwd: empty.dir });

describe('interlock --help', () => {
  it('lists the commands, examples and the exit codes, exit 0', async () => {
    const result = await cli(['--help']);
    expect(result.code).toBe(0);
    for (const command of ['servers', 'tools', 'call', 'check', 'pins', 'login', 'logout', 'demo']) {
      expect(result.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
    expect(result.stdout).toContain('Examples:');
    expect(result.stdout).toContain(
      'interlock call mcp__notes__read_note --args \'{"id":"drafts/welcome"}\'',
    );
    expect(result.stdout).toMatch(
      /Exit codes:\n\s+0\s+ok\n\s+1\s+error.*\n\s+2\s+bad usage or config.*\n\s+3\s+denied/,
    );
    expect(result.stdout).toContain('NO_COLOR');
  });

  it('prints help for a command and the version', async () => {
    const help = await cli(['call', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--args-file <file>');
    // Issue 39: a command's help lists the options every command takes, too.
    for (const command of ['call', 'tools', 'servers']) {
      const text = (await cli([command, '--help'])).stdout;
      expect(text).toContain('-c, --config <file>');
      expect(text).toContain('--json');
      expect(text).toContain('--verbose');
    }
    const version = await cli(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('bad usage exits 2', () => {
  it('for no command, an unknown command, an unknown option and a missing argument', async () => {
    const results = await Promise.all([
      cli([]),
      cli(['frobnicate']),
      cli(['servers', '--frob']),
      cli(['call']),
    ]);
    expect(results.map((r) => r.code)).toEqual([2, 2, 2, 2]);
    expect(results[1]?.stderr).toContain("unknown command 'frobnicate'");
    expect(results[2]?.stderr).toContain("unknown option '--frob'");
    expect(results[3]?.stderr).toContain("missing required argument 'tool'");
  });

  it('for --args that are not a JSON object, or given twice', async () => {
    const [notJson, notObject, both] = await Promise.all([
      cli(['call', 'mcp__x__y', '--args', '{nope']),
      cli(['call', 'mcp__x__y', '--args', '[1,2]', '--json']),
      cli(['call', 'mcp__x__y', '--args', '{}', '--args-file', 'a.json']),
    ]);
    expect(notJson?.code).toBe(2);
    expect(notJson?.stderr).toContain('are not valid JSON');
    expect(notObject?.code).toBe(2);
    expect(json(notObject!)).toEqual({
      error: { code: 'INVALID_USAGE', message: expect.stringContaining('found an array'), exitCode: 2 },
    });
    expect(both?.code).toBe(2);
  });

  it('for a missing project file, naming the directory and what to create', async () => {
    const text = await cli(['servers']);
    expect(text.code).toBe(2);
    expect(text.stderr).toContain(`No project file in ${empty.dir}`);
    expect(text.stderr).toContain('interlock.config.yaml');
    const data = await cli(['tools', '--json', '--config', 'nope.yaml']);
    expect(data.code).toBe(2);
    expect(json(data)).toMatchObject({ error: { code: 'INVALID_CONFIG', file: 'nope.yaml', exitCode: 2 } });
    expect(data.stderr).toBe('');
  });
});
