import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMCPConfig, parseMCPConfig, stripJsonComments } from '../../src/config/mcp-json.js';
import { parseServerConfig, parseServerConfigs, toolPassesFilter } from '../../src/config/servers.js';
import { ConfigError } from '../../src/errors.js';
import { stdioEnvironment } from '../../src/protocol/transport.js';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('server configs', () => {
  it('applies the documented defaults', () => {
    const config = parseServerConfig({ name: 'fs', transport: 'stdio', command: 'node' });
    expect(config).toMatchObject({
      timeoutMs: 60_000,
      connectTimeoutMs: 30_000,
      enabled: true,
      args: [],
      env: {},
      inheritEnv: false,
    });
  });

  it.each([
    ['', 'name'],
    ['a'.repeat(41), 'name'],
    ['has space', 'name'],
    ['two__parts', 'name'],
    ['_lead', 'name'],
    ['trail_', 'name'],
    ['dot.name', 'name'],
    ['colon:name', 'name'],
  ])('rejects the server name %j with INVALID_CONFIG naming the field', (name, field) => {
    const err = configError(() => parseServerConfig({ name, transport: 'stdio', command: 'x' }));
    expect(err.code).toBe('INVALID_CONFIG');
    expect(err.issues.map((i) => i.path)).toContain(field);
  });

  it.each(['fs', 'a', 'my-server', 'Server_2', 'a-b_c', 'x'.repeat(40)])(
    'accepts the server name %j',
    (name) => {
      expect(parseServerConfig({ name, transport: 'stdio', command: 'x' }).name).toBe(name);
    },
  );

  it('names the server and the exact field path of a bad field', () => {
    const err = configError(() =>
      parseServerConfig({ name: 'fs', transport: 'stdio', command: 'node', args: ['ok', 3] }),
    );
    expect(err.server).toBe('fs');
    expect(err.message).toContain("server 'fs'");
    expect(err.issues[0]?.path).toBe('args[1]');
  });

  it('rejects unknown fields, so a typo is not silently ignored', () => {
    const err = configError(() => parseServerConfig({ name: 'fs', transport: 'stdio', comand: 'node' }));
    expect(err.message).toMatch(/comand/);
  });

  it('rejects an unknown transport with the list of valid ones', () => {
    const err = configError(() => parseServerConfig({ name: 'x', transport: 'websocket', url: 'ws://a' }));
    expect(err.message).toMatch(/stdio/);
  });

  it.each(['ftp://example.test/mcp', 'file:///etc/passwd', 'not a url'])('rejects the URL %j', (url) => {
    const err = configError(() => parseServerConfig({ name: 'r', transport: 'http', url }));
    expect(err.issues[0]?.path).toBe('url');
  });

  it('rejects non-positive timeouts', () => {
    const err = configError(() =>
      parseServerConfig({ name: 'r', transport: 'http', url: 'http://127.0.0.1/mcp', timeoutMs: 0 }),
    );
    expect(err.issues[0]?.path).toBe('timeoutMs');
  });

  it('rejects two servers with the same name', () => {
    const err = configError(() =>
      parseServerConfigs([
        { name: 'a', transport: 'stdio', command: 'x' },
        { name: 'a', transport: 'stdio', command: 'y' },
      ]),
    );
    expect(err.message).toMatch(/duplicate/);
  });

  it('never puts header values in error messages', () => {
    const err = configError(() =>
      parseServerConfig({
        name: 'r',
        transport: 'http',
        url: 'http://127.0.0.1/mcp',
        headers: { 'Bad Header': 'Bearer sk-secret-123' },
      }),
    );
    expect(err.message).not.toContain('sk-secret-123');
  });
});

describe('tool filters', () => {
  it('exposes everything without a filter, and deny wins over allow', () => {
    expect(toolPassesFilter(undefined, 'anything')).toBe(true);
    const filter = { allow: ['read_*', 'list'], deny: ['read_secret*'] };
    expect(toolPassesFilter(filter, 'read_file')).toBe(true);
    expect(toolPassesFilter(filter, 'list')).toBe(true);
    expect(toolPassesFilter(filter, 'listx')).toBe(false);
    expect(toolPassesFilter(filter, 'read_secret_key')).toBe(false);
    expect(toolPassesFilter(filter, 'write_file')).toBe(false);
    expect(toolPassesFilter({ deny: ['*_file'] }, 'write_file')).toBe(false);
    expect(toolPassesFilter({ deny: ['*_file'] }, 'write')).toBe(true);
  });
});

describe('stdio environment', () => {
  const parent = {
    PATH: '/usr/bin',
    HOME: '/home/u',
    AWS_SECRET_ACCESS_KEY: 'leak-me-not',
    EXTRA: 'extra',
  };

  it('passes only the minimal list plus the config env by default', () => {
    const env = stdioEnvironment({ env: { MY_VAR: '1' }, inheritEnv: false }, parent);
    expect(env.AWS_SECRET_ACCESS_KEY).toBeUndefined();
    expect(env.EXTRA).toBeUndefined();
    expect(env.MY_VAR).toBe('1');
  });

  it('passes named variables when inheritEnv lists them, and everything when true', () => {
    expect(stdioEnvironment({ env: {}, inheritEnv: ['EXTRA'] }, parent).EXTRA).toBe('extra');
    expect(
      stdioEnvironment({ env: {}, inheritEnv: ['EXTRA'] }, parent).AWS_SECRET_ACCESS_KEY,
    ).toBeUndefined();
    expect(stdioEnvironment({ env: {}, inheritEnv: true }, parent).AWS_SECRET_ACCESS_KEY).toBe('leak-me-not');
  });
});

describe('mcp.json files', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('reads the Claude Desktop / Cursor / .mcp.json shape', () => {
    const configs = parseMCPConfig({
      mcpServers: {
        fs: { command: 'npx', args: ['-y', 'server-filesystem', '/data'], env: { A: '1' } },
        remote: { url: 'https://mcp.example.test/mcp', headers: { Authorization: 'Bearer x' } },
        legacy: { type: 'sse', url: 'https://mcp.example.test/sse' },
        streaming: { type: 'streamable-http', url: 'https://mcp.example.test/mcp' },
        off: { command: 'x', disabled: true },
      },
    });
    expect(configs.map((c) => [c.name, c.transport])).toEqual([
      ['fs', 'stdio'],
      ['remote', 'auto'],
      ['legacy', 'sse'],
      ['streaming', 'http'],
      ['off', 'stdio'],
    ]);
    expect(configs[4]?.enabled).toBe(false);
  });

  it("reads VS Code's servers shape", () => {
    const configs = parseMCPConfig({
      servers: {
        gh: { type: 'http', url: 'https://api.example.test/mcp' },
        local: { type: 'stdio', command: 'x' },
      },
    });
    expect(configs.map((c) => c.transport)).toEqual(['http', 'stdio']);
  });

  it('expands ${VAR} and ${VAR:-default}, and names an unset variable and where it is used', () => {
    const env = { TOKEN: 'secret-token', ROOT: '/srv' };
    const configs = parseMCPConfig(
      {
        mcpServers: {
          fs: { command: 'x', args: ['${ROOT}/data', '${MISSING:-/tmp}'], env: { T: '${env:TOKEN}' } },
        },
      },
      { env },
    );
    const fs = configs[0];
    expect(fs?.transport === 'stdio' && fs.args).toEqual(['/srv/data', '/tmp']);
    expect(fs?.transport === 'stdio' && fs.env.T).toBe('secret-token');

    const err = configError(() =>
      parseMCPConfig(
        { mcpServers: { gh: { url: 'https://x.test', headers: { Authorization: 'Bearer ${GH_TOKEN}' } } } },
        { env },
      ),
    );
    expect(err.message).toContain('GH_TOKEN');
    expect(err.issues[0]?.path).toBe('mcpServers.gh.headers.Authorization');
  });

  it('never copies prototype-polluting keys', () => {
    const input = JSON.parse('{"mcpServers":{"a":{"command":"x","__proto__":{"polluted":true}}}}');
    expect(() => parseMCPConfig(input)).toThrow(/forbidden key/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('reports every bad server at once with its path', () => {
    const err = configError(() =>
      parseMCPConfig({ mcpServers: { 'bad name': { command: 'x' }, nothing: {}, ok: { command: 'y' } } }),
    );
    const paths = err.issues.map((i) => i.path);
    expect(paths).toContain('mcpServers["bad name"].name');
    expect(paths).toContain('mcpServers.nothing');
  });

  it('rejects a file without mcpServers or servers', () => {
    expect(() => parseMCPConfig({ tools: {} })).toThrow(/mcpServers/);
    expect(() => parseMCPConfig([])).toThrow(ConfigError);
  });

  it('loads a file with comments and trailing commas, and names the file in errors', async () => {
    dir = mkdtempSync(join(tmpdir(), 'interlock-config-'));
    const good = join(dir, 'mcp.json');
    writeFileSync(
      good,
      '{\n // VS Code style\n "servers": { "a": { "command": "x", "args": ["//not a comment",] }, },\n}\n',
    );
    const configs = await loadMCPConfig(good);
    expect(configs[0]?.transport === 'stdio' && configs[0].args).toEqual(['//not a comment']);

    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{ "mcpServers": ');
    await expect(loadMCPConfig(bad)).rejects.toThrow(bad);
    await expect(loadMCPConfig(join(dir, 'missing.json'))).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
  });

  it('keeps strings with comma-brace sequences intact when stripping JSONC', () => {
    expect(JSON.parse(stripJsonComments('{"a": "x,}", "b": [1, 2,],}'))).toEqual({ a: 'x,}', b: [1, 2] });
  });
});
