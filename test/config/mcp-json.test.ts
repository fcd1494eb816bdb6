// Issue 15, "config parsed once": an mcp.json server entry is loaded by one schema (expand, translate the file
// format, validate) whose output is the server config type.
import { describe, expect, it } from 'vitest';
import { serverEntrySchema } from '../../src/config/mcp-json.js';
import type { MCPServerConfig } from '../../src/config/servers.js';
import { toConfigIssues } from '../../src/zod-issues.js';

const issuesOf = (name: string, entry: unknown, env: Record<string, string> = {}) => {
  const result = serverEntrySchema(name, { env }).safeParse(entry);
  return result.success ? [] : toConfigIssues(result.error, `mcpServers.${name}`);
};

describe('the server entry schema', () => {
  it('expands, translates type and disabled, applies defaults and names the server', () => {
    const config: MCPServerConfig = serverEntrySchema('web', { env: { HOST: 'mcp.example' } }).parse({
      type: 'streamable-http',
      url: 'https://${HOST}/mcp',
      disabled: true,
    });
    expect(config).toMatchObject({
      name: 'web',
      transport: 'http',
      url: 'https://mcp.example/mcp',
      enabled: false,
    });
    const stdio = serverEntrySchema('fs', { env: {} }).parse({
      command: 'node',
      args: ['${ARG:-server.js}'],
    });
    expect(stdio).toMatchObject({ name: 'fs', transport: 'stdio', command: 'node', args: ['server.js'] });
  });

  it('keeps the values variables put in when asked to', () => {
    const seen: unknown[] = [];
    serverEntrySchema('api', { env: { KEY: 'k-123456' }, collect: (v) => seen.push(v) }).parse({
      url: 'https://api.example/mcp',
      headers: { Authorization: 'Bearer ${KEY}' },
    });
    expect(seen).toEqual([{ url: 'https://api.example/mcp', headers: { Authorization: 'Bearer ${KEY}' } }]);
  });

  it('stops at an unset variable with one issue at its field', () => {
    expect(issuesOf('web', { url: '${WEB_URL}' })).toEqual([
      {
        path: 'mcpServers.web.url',
        message: "environment variable 'WEB_URL' is not set (set it, or write ${WEB_URL:-default})",
      },
    ]);
  });

  it('names a type that does not fit, an unknown field, a non-object and a bad value by their paths', () => {
    expect(issuesOf('a', { command: 'node', type: 'sse' })).toEqual([
      { path: 'mcpServers.a.type', message: `'sse' does not go with "command"; use 'stdio'` },
    ]);
    expect(issuesOf('b', { comand: 'node' })).toEqual([
      { path: 'mcpServers.b', message: "unknown field(s) 'comand'" },
    ]);
    expect(issuesOf('c', 'node server.js')).toEqual([
      { path: 'mcpServers.c', message: 'expected an object with "command" or "url"' },
    ]);
    expect(issuesOf('d', { command: 'node', timeoutMs: 'fast' }).map((i) => i.path)).toEqual([
      'mcpServers.d.timeoutMs',
    ]);
  });
});
