// Issue 15: one zod-to-error helper. A mistake reads the same whichever area parses it: the same path syntax and
// the same words for an unknown field.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseServerConfig } from '../src/config/servers.js';
import { ConfigError, PolicyError } from '../src/errors.js';
import { parseOptions } from '../src/providers/options.js';
import { parsePolicy } from '../src/security/policy.js';
import { parseToolSchemas } from '../src/tools/schema.js';
import { appendPath, describeIssues, formatPath, toConfigIssues } from '../src/zod-issues.js';

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a throw');
}

describe('the one zod-to-error helper', () => {
  it('writes paths one way: indexes in brackets, keys that are not plain quoted', () => {
    expect(formatPath(['servers', 0, 'env', 'API_KEY'])).toBe('servers[0].env.API_KEY');
    expect(formatPath(['mcpServers', 'my.server', 'url'])).toBe('mcpServers["my.server"].url');
    expect(appendPath('', 'a b')).toBe('["a b"]');
    expect(formatPath([])).toBe('');
  });

  it('names unknown fields, prefixes paths, and says (root) for the whole value', () => {
    const schema = z.object({ a: z.object({ b: z.number() }).strict() }).strict();
    const result = schema.safeParse({ a: { b: 'x', c: 1 }, d: 2 });
    expect(result.success).toBe(false);
    if (result.success) return;
    const issues = toConfigIssues(result.error, 'section');
    expect(issues.map((i) => i.path)).toEqual(['section.a.b', 'section.a', 'section']);
    expect(issues[1]?.message).toBe("unknown field(s) 'c'");
    expect(describeIssues(issues)).toContain("section: unknown field(s) 'd'");
    const whole = z.number().safeParse('x');
    if (whole.success) return;
    expect(toConfigIssues(whole.error)[0]?.path).toBe('(root)');
  });

  it('reports a bad field the same way from a server config, a policy, provider options and tool schemas', () => {
    const server = thrown(() =>
      parseServerConfig({ name: 's', transport: 'stdio', command: 'x', comand: 1 }),
    );
    expect(server).toBeInstanceOf(ConfigError);
    expect(server.message).toContain("(root): unknown field(s) 'comand'");
    const policy = thrown(() =>
      parsePolicy({
        version: 1,
        rules: [{ effect: 'allow', resource: 'mcp:a:b', actions: 'execute', x: 1 }],
      }),
    );
    expect(policy).toBeInstanceOf(PolicyError);
    expect(policy.message).toContain("rules[0]: unknown field(s) 'x'");
    const provider = thrown(() =>
      parseOptions(z.object({ n: z.number() }).strict(), { n: 1, y: 2 }, 'openai'),
    );
    expect(provider.message).toBe("Invalid openai options: openai: unknown field(s) 'y'");
    // Tool schemas from servers may carry extra fields; a wrong one is named with the same path syntax.
    const tools = thrown(() =>
      parseToolSchemas('fs', [{ name: 'x', inputSchema: { properties: { 'a.b': 1 } } }]),
    );
    expect(tools.message).toContain('tools[0].inputSchema.properties["a.b"]');
  });

  it('says which transports exist when a server config has none it knows', () => {
    const err = thrown(() => parseServerConfig({ name: 's', transport: 'pigeon' })) as ConfigError;
    expect(err.issues).toEqual([
      { path: 'transport', message: "'transport' must be one of 'stdio', 'sse', 'http', 'auto'" },
    ]);
  });
});
