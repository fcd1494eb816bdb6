/**
 * Bad project files, through the CLI as a process: every kind of error exits 2 before any server starts,
 * and says which file, which field (and line), what was expected and what was found. Never a secret.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EVERYTHING_BIN } from '../helpers/http-fixtures.js';
import { type CliResult, json, runCli, type TempProject, tempProject } from './helpers.js';

let project: TempProject;
beforeEach(() => {
  project = tempProject();
});
afterEach(() => project.close());

interface ErrorJson {
  error: {
    code: string;
    file?: string;
    message: string;
    exitCode: number;
    issues: { path: string; message: string; line?: number; file?: string }[];
  };
}

/** `check` on a resource loads the project file and starts nothing: the quickest command that reads it. */
async function check(
  config: string | object,
  env: Record<string, string> = {},
  name = 'interlock.config.yaml',
) {
  project.write(name, config);
  const result = await runCli(['check', 'mcp:a:b', '--json'], { cwd: project.dir, env });
  expect(result.servers).toEqual([]);
  return result;
}

function configError(result: CliResult): ErrorJson['error'] {
  expect(result.code).toBe(2);
  const { error } = json<ErrorJson>(result);
  expect(error).toMatchObject({ code: 'INVALID_CONFIG', exitCode: 2 });
  return error;
}

describe('a bad project file exits 2 and says what is wrong', () => {
  it('YAML syntax: the position, on stderr for people', async () => {
    project.write('interlock.config.yaml', 'mcpServers:\n  a: { command: x\n');
    const result = await runCli(['servers'], { cwd: project.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^error: Invalid config file interlock\.config\.yaml:\d+:\d+: not valid YAML/,
    );
    expect(result.stdout).toBe('');
  });

  it('JSON syntax', async () => {
    const error = configError(await check('{ "mcpServers": { ', {}, 'interlock.config.json'));
    expect(error.file).toBe('interlock.config.json');
    expect(error.message).toContain('not valid JSON');
  });

  it('a wrong type and a value outside its options: expected and found, with the line', async () => {
    const error = configError(
      await check('mcpServers:\n  notes:\n    command: node\n    timeoutMs: fast\n    onToolChange: never\n'),
    );
    expect(error.file).toBe('interlock.config.yaml');
    expect(error.issues).toEqual([
      { path: 'mcpServers.notes.timeoutMs', message: 'expected number, found "fast"', line: 4, column: 16 },
      {
        path: 'mcpServers.notes.onToolChange',
        message: 'expected one of "block"|"warn"|"accept", found "never"',
        line: 5,
        column: 19,
      },
    ]);
  });

  it('an unknown field, with the field it probably meant', async () => {
    const error = configError(await check({ mcpServers: { a: { command: 'x', timeout: 5 } }, polcy: {} }));
    expect(error.issues).toContainEqual(
      expect.objectContaining({
        path: 'mcpServers.a',
        message: "unknown field 'timeout' (did you mean 'timeoutMs'?)",
      }),
    );
    expect(error.issues).toContainEqual(
      expect.objectContaining({ path: '(root)', message: "unknown field 'polcy' (did you mean 'policy'?)" }),
    );
  });

  it('an unset variable without a default: names the variable and where it is used', async () => {
    const error = configError(
      await check({ mcpServers: { api: { url: '${API_URL}', headers: { 'X-Region': '${REGION:-eu}' } } } }),
    );
    expect(error.issues).toEqual([
      expect.objectContaining({
        path: 'mcpServers.api.url',
        message: "environment variable 'API_URL' is not set (set it, or write ${API_URL:-default})",
      }),
    ]);
    const fixed = await runCli(['check', 'mcp:a:b', '--json'], {
      cwd: project.dir,
      env: { API_URL: 'https://api.example/mcp' },
    });
    expect(fixed.code).toBe(3); // loads now; the policy (there is none) denies
  });

  it('never shows a secret, even when the field holding it is wrong', async () => {
    const secret = 'sk-live-0123456789abcdef';
    const result = await check(
      {
        mcpServers: {
          api: {
            url: 'https://api.example/mcp',
            headers: { 'bad header': 'Bearer ${API_KEY}' },
            timeoutMs: '${API_KEY}',
          },
        },
      },
      { API_KEY: secret },
    );
    const error = configError(result);
    expect(error.issues.map((i) => i.path)).toEqual([
      'mcpServers.api.timeoutMs',
      'mcpServers.api.headers["bad header"]',
    ]);
    expect(result.stdout + result.stderr).not.toContain(secret);
  });

  it('a server with neither command nor url, and a bad server name', async () => {
    const error = configError(
      await check({ mcpServers: { empty: { args: ['x'] }, 'two words': { command: 'x' } } }),
    );
    expect(error.issues).toContainEqual(
      expect.objectContaining({
        path: 'mcpServers.empty',
        message: expect.stringContaining('expected "command"'),
      }),
    );
    expect(error.issues).toContainEqual(
      expect.objectContaining({
        path: 'mcpServers["two words"]',
        message: expect.stringContaining('the server name'),
      }),
    );
  });

  it('a policy rule the policy schema or the capability model refuses', async () => {
    const error = configError(
      await check({
        mcpServers: { a: { command: 'x' } },
        policy: { version: 1, rules: [{ effect: 'allow', resource: 'mcp:a', actions: 'execute' }] },
      }),
    );
    expect(error.issues).toEqual([
      expect.objectContaining({
        path: 'policy.rules[0].resource',
        message: expect.stringContaining('at least 3 segments'),
      }),
    ]);
  });

  it('a referenced mcp.json or policy file that is missing or invalid: names that file', async () => {
    const missing = configError(await check({ mcpConfig: './nope/.mcp.json' }));
    expect(missing.file).toBe('nope/.mcp.json');
    expect(missing.message).toContain('the file does not exist');

    project.write('policy.yaml', 'version: 2\nrules: []\n');
    const policy = configError(
      await check({ mcpServers: { a: { command: 'x' } }, policy: { file: 'policy.yaml' } }),
    );
    expect(policy.file).toBe('policy.yaml');
    expect(policy.issues).toEqual([expect.objectContaining({ path: 'version', line: 1 })]);
  });
});

describe('every problem at once, in every file the project names', () => {
  it('lists the mistakes of the project file, its mcp.json and its policy file in one error, with did-you-mean', async () => {
    project.write('.mcp.json', { mcpServers: { 'my.server': { command: 'node', agrs: [] } } });
    project.write(
      'policy.yaml',
      'version: 1\nrules:\n  - effect: allow\n    resourse: mcp:a:b\n    actions: execute\n',
    );
    const result = await check(
      [
        'mcpConfig: ./.mcp.json',
        'mcpServers:',
        '  notes:',
        '    comand: node',
        '  other:',
        '    command: node',
        '    timeoutMs: fast',
        'polcy: {}',
        'policy:',
        '  file: policy.yaml',
        '',
      ].join('\n'),
    );
    const error = configError(result);
    expect(error.file).toBe('interlock.config.yaml');
    expect(error.issues).toEqual([
      expect.objectContaining({ path: '(root)', message: "unknown field 'polcy' (did you mean 'policy'?)" }),
      {
        file: '.mcp.json',
        path: 'mcpServers["my.server"]',
        message:
          'the server name "my.server" must be 1-40 characters of A-Z, a-z, 0-9, _ and -; give it a safe name in interlock.config.yaml: mcpConfig: { path: "./.mcp.json", rename: { "my.server": "my_server" } }',
      },
      {
        file: '.mcp.json',
        path: 'mcpServers["my.server"]',
        message: "unknown field 'agrs' (did you mean 'args'?)",
      },
      expect.objectContaining({
        path: 'mcpServers.notes',
        message: "unknown field 'comand' (did you mean 'command'?)",
        line: 4,
      }),
      expect.objectContaining({
        path: 'mcpServers.other.timeoutMs',
        message: 'expected number, found "fast"',
      }),
      expect.objectContaining({
        file: 'policy.yaml',
        path: 'rules[0].resource',
        message: 'required: expected string, found nothing',
      }),
      expect.objectContaining({
        file: 'policy.yaml',
        path: 'rules[0]',
        message: "unknown field 'resourse' (did you mean 'resource'?)",
        line: 4,
      }),
    ]);
    expect(error.message).toMatch(
      /^Invalid configuration \(7 problems in 3 files\):\n {2}interlock\.config\.yaml:\n/,
    );
    expect(error.message).toContain('\n  .mcp.json (MCP config):\n    - mcpServers["my.server"]: ');
    expect(error.message).toContain(
      '\n  policy.yaml (policy file):\n    - rules[0].resource (line 3, column 5): ',
    );
  });

  it('says which referenced file is missing while still reporting the project file', async () => {
    const error = configError(
      await check({ mcpConfig: './nope.json', mcpServers: { a: { command: 'x', timout: 1 } } }),
    );
    expect(error.issues).toEqual([
      { file: 'nope.json', path: '(file)', message: 'the file does not exist' },
      expect.objectContaining({
        path: 'mcpServers.a',
        message: "unknown field 'timout' (did you mean 'timeoutMs'?)",
      }),
    ]);
  });
});

describe('an mcp.json whose server names Interlock cannot use', () => {
  it('runs a server renamed in the project file, and the policy names it by its new name', async () => {
    project.write('.mcp.json', {
      mcpServers: { 'my.server': { command: process.execPath, args: [EVERYTHING_BIN] } },
    });
    project.write('interlock.config.yaml', {
      mcpConfig: { path: './.mcp.json', rename: { 'my.server': 'my_server' } },
      mcpServers: { my_server: { tools: { allow: ['echo'] } } },
      policy: {
        version: 1,
        rules: [{ effect: 'allow', resource: 'mcp:my_server:echo', actions: 'execute' }],
      },
    });
    const result = await runCli(
      ['call', 'mcp__my_server__echo', '--args', '{"message":"hi from the alias"}', '--json'],
      {
        cwd: project.dir,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.stringify(json(result))).toContain('hi from the alias');
  });

  it('refuses a new name that is not safe, and a rename of a server the file does not have', async () => {
    project.write('.mcp.json', { mcpServers: { 'my.server': { command: 'x' } } });
    const error = configError(
      await check({
        mcpConfig: { path: './.mcp.json', rename: { 'my.server': 'still.bad', 'my.srver': 'b' } },
      }),
    );
    expect(error.issues).toEqual([
      expect.objectContaining({
        path: 'mcpConfig.rename["my.server"]',
        message: expect.stringContaining('must be 1-40 characters'),
      }),
      expect.objectContaining({
        path: 'mcpConfig.rename["my.srver"]',
        message: '.mcp.json has no server "my.srver" (did you mean "my.server"?)',
      }),
    ]);
  });
});
