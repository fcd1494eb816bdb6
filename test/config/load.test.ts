/**
 * The project file loader: shapes it accepts (Claude Desktop / .mcp.json, VS Code), what it resolves
 * (paths, variables, defaults), how it reuses an existing mcp.json and a policy file, and what its errors say.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FileIssue } from '../../src/config/file-issues.js';
import { loadInterlockConfig } from '../../src/config/index.js';
import { parseMCPConfig } from '../../src/config/mcp-json.js';
import { TRANSPORT_TYPE_ALIASES } from '../../src/config/schema.js';
import { createMasker } from '../../src/config/secrets.js';
import type { ConfigError } from '../../src/errors.js';
import { type TempProject, tempProject } from '../cli/helpers.js';

let project: TempProject;
beforeEach(() => {
  project = tempProject();
});
afterEach(() => project.close());

const load = (env: Record<string, string> = {}, file?: string) =>
  loadInterlockConfig({ cwd: project.dir, env, ...(file === undefined ? {} : { file }) });

/** The ConfigError a load throws. */
async function failure(env: Record<string, string> = {}, file?: string): Promise<ConfigError> {
  try {
    await load(env, file);
  } catch (err) {
    return err as ConfigError;
  }
  throw new Error('the config loaded');
}

describe('loading a project file', () => {
  it('reads mcpServers in the Claude Desktop shape, applies defaults and resolves paths against the file', async () => {
    project.write('interlock.config.yaml', {
      mcpServers: {
        local: { command: 'node', args: ['server.mjs'], env: { MODE: '${MODE:-dev}' } },
        sub: { command: 'node', cwd: 'sub' },
        remote: { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
        legacy: { type: 'sse', url: 'https://example.com/sse' },
      },
      policy: { version: 1, rules: [{ effect: 'allow', resource: 'mcp:local:*', actions: 'execute' }] },
      pins: { file: 'state/pins.json' },
      audit: { file: '~/audit.jsonl' },
    });
    const config = await load({ TOKEN: 'abcdef123456' });
    expect(config.file).toBe(join(project.dir, 'interlock.config.yaml'));
    expect(config.servers).toEqual([
      expect.objectContaining({ name: 'local', transport: 'stdio', cwd: project.dir, env: { MODE: 'dev' } }),
      expect.objectContaining({ name: 'sub', transport: 'stdio', cwd: join(project.dir, 'sub') }),
      expect.objectContaining({
        name: 'remote',
        transport: 'auto',
        headers: { Authorization: 'Bearer abcdef123456' },
        timeoutMs: 60_000,
      }),
      expect.objectContaining({ name: 'legacy', transport: 'sse' }),
    ]);
    expect(config.policy?.rules).toHaveLength(1);
    expect(config.policyFile).toBe(config.file);
    expect(config.pinsFile).toBe(join(project.dir, 'state/pins.json'));
    expect(config.auditFile).toBe(join(homedir(), 'audit.jsonl'));
    expect(config.agent).toBe('interlock-cli');
    expect(config.secrets).toEqual(['abcdef123456']);
  });

  it("reads VS Code's servers shape from JSON with comments, and ${env:VAR}", async () => {
    project.write(
      'interlock.config.json',
      `{
        // VS Code writes comments and trailing commas
        "servers": { "gh": { "type": "http", "url": "\${env:GH_URL}", }, },
        "agent": "ci",
      }`,
    );
    const config = await load({ GH_URL: 'https://gh.example/mcp' });
    expect(config.servers).toEqual([
      expect.objectContaining({ name: 'gh', transport: 'http', url: 'https://gh.example/mcp' }),
    ]);
    expect(config.agent).toBe('ci');
    expect(config.policy).toBeUndefined();
    expect(config.pinsFile).toBe(join(project.dir, '.interlock/pins.json'));
  });

  it('looks for interlock.config.yaml, then .yml, then .json', async () => {
    project.write('interlock.config.json', { mcpServers: { json: { command: 'x' } } });
    expect((await load()).servers[0]?.name).toBe('json');
    project.write('interlock.config.yml', { mcpServers: { yml: { command: 'x' } } });
    expect((await load()).servers[0]?.name).toBe('yml');
    project.write('interlock.config.yaml', { mcpServers: { yaml: { command: 'x' } } });
    expect((await load()).servers[0]?.name).toBe('yaml');
  });

  it('accepts every transport alias the schema documents, as parseMCPConfig does', () => {
    for (const [transport, aliases] of Object.entries(TRANSPORT_TYPE_ALIASES)) {
      for (const type of aliases) {
        const entry = transport === 'stdio' ? { type, command: 'x' } : { type, url: 'https://x.example/' };
        expect(parseMCPConfig({ mcpServers: { s: entry } })[0]?.transport).toBe(transport);
      }
    }
  });
});

describe('certificate files of remote servers', () => {
  it('are relative to the file that names them: the mcp.json, or the project file for options added to it', async () => {
    project.write(
      'tools/.mcp.json',
      JSON.stringify({
        mcpServers: {
          a: { type: 'http', url: 'https://a.example/mcp', tls: { caFile: 'certs/a-ca.pem' } },
          b: { type: 'http', url: 'https://b.example/mcp', tls: { caFile: 'certs/b-ca.pem' } },
        },
      }),
    );
    project.write('interlock.config.yaml', {
      mcpConfig: './tools/.mcp.json',
      mcpServers: {
        b: { tls: { caFile: 'mine/b-ca.pem', certFile: 'mine/b.pem', keyFile: '/abs/b.key' } },
        c: { type: 'http', url: 'https://c.example/mcp', tls: { caFile: ['x.pem', 'y.pem'] } },
      },
      http: { tls: { caFile: 'shared/ca.pem' } },
    });
    const config = await load({});
    const tls = Object.fromEntries(
      config.servers.map((s) => [s.name, s.transport === 'stdio' ? undefined : s.tls]),
    );
    expect(tls).toEqual({
      a: { caFile: join(project.dir, 'tools/certs/a-ca.pem') },
      b: {
        caFile: join(project.dir, 'mine/b-ca.pem'),
        certFile: join(project.dir, 'mine/b.pem'),
        keyFile: '/abs/b.key',
      },
      c: { caFile: [join(project.dir, 'x.pem'), join(project.dir, 'y.pem')] },
    });
    expect(config.http).toEqual({ tls: { caFile: join(project.dir, 'shared/ca.pem') } });
  });
});

describe('an existing mcp.json and a policy file', () => {
  it('uses the servers of mcpConfig, adds options to them, and reads the policy from its own file', async () => {
    project.write(
      'tools/.mcp.json',
      `{ "mcpServers": {
          "notes": { "command": "node", "args": ["notes.mjs"], "env": { "A": "1" } },
          "gh": { "type": "http", "url": "https://gh.example/mcp", "headers": { "Authorization": "Bearer \${GH_TOKEN}" } }
      } }`,
    );
    project.write(
      'policy.yaml',
      'version: 1\nrules:\n  - { effect: allow, resource: "mcp:notes:*", actions: execute }\n',
    );
    project.write('interlock.config.yaml', {
      mcpConfig: './tools/.mcp.json',
      mcpServers: {
        notes: { timeoutMs: 5000, env: { B: '2' }, tools: { deny: ['delete_*'] } },
        gh: { disabled: true },
        extra: { command: 'extra' },
      },
      policy: { file: 'policy.yaml' },
    });
    const config = await load({ GH_TOKEN: 'ghp_0123456789' });
    expect(config.servers).toEqual([
      expect.objectContaining({
        name: 'notes',
        timeoutMs: 5000,
        env: { A: '1', B: '2' },
        tools: { deny: ['delete_*'] },
        cwd: join(project.dir, 'tools'), // relative to the file that defines it
      }),
      expect.objectContaining({ name: 'gh', enabled: false }),
      expect.objectContaining({ name: 'extra', cwd: project.dir }),
    ]);
    expect(config.policyFile).toBe(join(project.dir, 'policy.yaml'));
    expect(config.secrets).toContain('ghp_0123456789');
  });

  it('refuses a server defined in both files', async () => {
    project.write('mcp.json', { mcpServers: { notes: { command: 'node' } } });
    project.write('interlock.config.yaml', {
      mcpConfig: 'mcp.json',
      mcpServers: { notes: { command: 'other' } },
    });
    const error = await failure();
    expect(error.issues).toEqual([
      expect.objectContaining({
        path: 'mcpServers.notes',
        message: expect.stringContaining('also defined in mcpConfig'),
      }),
    ]);
  });

  it('names the referenced file when it is missing or invalid', async () => {
    project.write('interlock.config.yaml', { mcpConfig: 'missing.json' });
    const missing = await failure();
    expect(missing.file).toBe('missing.json');
    expect(missing.message).toBe('Invalid MCP config missing.json (1 problem):\n  - the file does not exist');

    project.write('bad.json', { mcpServers: { x: { command: 'node', timeoutMs: -1 } } });
    project.write('interlock.config.yaml', { mcpConfig: 'bad.json' });
    const bad = await failure();
    expect(bad.file).toBe('bad.json');
    expect(bad.issues).toEqual([expect.objectContaining({ path: 'mcpServers.x.timeoutMs' })]);

    project.write('policy.json', {
      version: 1,
      rules: [{ effect: 'allow', resource: 'mcp:x:*', action: 'execute' }],
    });
    project.write('interlock.config.yaml', {
      mcpServers: { x: { command: 'x' } },
      policy: { file: 'policy.json' },
    });
    const policy = await failure();
    expect(policy.message).toContain('Invalid policy file policy.json');
    expect(policy.issues).toContainEqual(
      expect.objectContaining({
        path: 'rules[0]',
        message: "unknown field 'action' (did you mean 'actions'?)",
      }),
    );
  });
});

describe('errors', () => {
  it('lists every problem of the file with path, line, what was expected and what was found', async () => {
    project.write(
      'interlock.config.yaml',
      [
        'mcpServers:',
        '  notes:',
        '    command: node',
        '    timeoutMs: fast',
        '    onToolChange: sometimes',
        '    timout: 5',
        '  web:',
        '    url: ${WEB_URL}',
        'polcy: {}',
        '',
      ].join('\n'),
    );
    const error = await failure();
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.file).toBe('interlock.config.yaml');
    const byPath = (path: string) => (error.issues as FileIssue[]).find((i) => i.path === path);
    expect(byPath('mcpServers.notes.timeoutMs')).toEqual({
      path: 'mcpServers.notes.timeoutMs',
      message: 'expected number, found "fast"',
      line: 4,
      column: 16,
    });
    expect(byPath('mcpServers.notes.onToolChange')?.message).toBe(
      'expected one of "block"|"warn"|"accept", found "sometimes"',
    );
    expect(byPath('mcpServers.notes')?.message).toBe("unknown field 'timout' (did you mean 'timeoutMs'?)");
    expect(byPath('mcpServers.notes')?.line).toBe(6);
    expect(byPath('mcpServers.web.url')?.message).toContain("environment variable 'WEB_URL' is not set");
    expect(byPath('(root)')?.message).toBe("unknown field 'polcy' (did you mean 'policy'?)");
    expect(error.message).toMatch(/^Invalid config file interlock\.config\.yaml \(5 problems\):\n {2}- /);
  });

  it('places a misspelt top-level key on its own line, not on the block below it (issue 39)', async () => {
    project.write(
      'interlock.config.yaml',
      ['# the project', 'mcpServers:', '  notes:', '    command: node', '', 'polcy:', '  rules: []', ''].join(
        '\n',
      ),
    );
    const error = await failure();
    const issue = (error.issues as FileIssue[]).find((i) => i.path === '(root)');
    expect(issue).toMatchObject({
      message: "unknown field 'polcy' (did you mean 'policy'?)",
      line: 6,
      column: 1,
    });
  });

  it('never puts a secret into a message', async () => {
    project.write('interlock.config.yaml', {
      mcpServers: {
        api: {
          url: 'not a url ${API_KEY}',
          headers: { Authorization: 'Bearer ${API_KEY}', 'bad header': 'literal-secret-value' },
        },
      },
    });
    const error = await failure({ API_KEY: 'sk-very-secret-123' });
    const text = `${error.message}\n${JSON.stringify(error.issues)}`;
    expect(text).toContain('mcpServers.api.url');
    expect(text).toContain('mcpServers.api.headers');
    expect(text).not.toContain('sk-very-secret-123');
    expect(text).not.toContain('literal-secret-value');
  });

  it('reports YAML and JSON syntax errors with their position', async () => {
    project.write('interlock.config.yaml', 'mcpServers:\n  a: [unclosed\n');
    const yaml = await failure();
    expect(yaml.message).toMatch(/^Invalid config file interlock\.config\.yaml:\d+:\d+: not valid YAML/);
    project.write('other.json', '{ "mcpServers": ');
    const json = await failure({}, 'other.json');
    expect(json.message).toContain('Invalid config file other.json: not valid JSON');
  });

  it('reports an empty file, no servers, both shapes at once, a bad server name and a bad policy', async () => {
    project.write('interlock.config.yaml', '');
    expect((await failure()).message).toContain('found an empty file');

    project.write('interlock.config.yaml', { policy: { version: 1, rules: [] } });
    expect((await failure()).issues).toEqual([
      expect.objectContaining({ path: 'mcpServers', message: expect.stringContaining('no servers') }),
    ]);

    project.write('interlock.config.yaml', {
      mcpServers: { 'my server': { command: 'x' } },
      servers: { b: { command: 'x' } },
      policy: { version: 1, rules: [{ effect: 'allow', resource: 'mcp', actions: 'execute' }] },
    });
    const issues = (await failure()).issues;
    expect(issues).toContainEqual(
      expect.objectContaining({ path: 'servers', message: expect.stringContaining('not both') }),
    );
    expect(issues).toContainEqual(
      expect.objectContaining({
        path: 'mcpServers["my server"]',
        message: expect.stringContaining('the server name "my server"'),
      }),
    );
    expect(issues).toContainEqual(
      expect.objectContaining({
        path: 'policy.rules[0].resource',
        message: expect.stringContaining('segments'),
      }),
    );
  });
});

describe('secrets', () => {
  it('keeps the secrets of every place a value can come from, as the schemas load it (issue 15)', async () => {
    project.write('mcp.json', {
      mcpServers: { gh: { url: 'https://gh.example/mcp', headers: { Authorization: 'Bearer ${GH_TOKEN}' } } },
    });
    project.write('interlock.config.yaml', {
      mcpConfig: 'mcp.json',
      mcpServers: {
        gh: { headers: { 'X-Api-Key': 'literal-overlay-key' } },
        local: { command: 'node', env: { DB_PASSWORD: 'literal-db-pass', MODE: '${MODE}' } },
      },
      http: { proxy: 'http://user:${PROXY_PASS}@proxy.example:3128' },
    });
    const config = await load({
      GH_TOKEN: 'ghp_from_mcp_json',
      MODE: 'development',
      PROXY_PASS: 'proxy-pass-1',
    });
    expect(config.secrets).toEqual(
      expect.arrayContaining([
        'ghp_from_mcp_json', // a variable in the mcp.json
        'literal-overlay-key', // a secret-named header in an overlay
        'literal-db-pass', // a secret-named env value of an inline entry
        'development', // every variable's value, whatever its name
        'proxy-pass-1', // a variable in a section
      ]),
    );
    expect(config.secrets).not.toContain('node'); // a command is no secret
  });

  it('masks every collected value, also inside longer text', () => {
    const mask = createMasker(['abcdef123456', 'short']);
    expect(mask('token abcdef123456 and short')).toBe('token *** and short');
  });
});
