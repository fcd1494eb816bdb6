import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isInterlockError } from '../../src/errors.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import {
  compilePattern,
  matchGlob,
  matchPattern,
  patternCovers,
  resourceFor,
  resourceProblem,
} from '../../src/security/pattern.js';

function matches(pattern: string, resource: string): boolean {
  return resourceProblem(resource) === undefined && matchPattern(compilePattern(pattern), resource);
}

describe('resource helpers', () => {
  it('builds the resource strings of MCP tools, resources, prompts, server requests and native tools', () => {
    expect(resourceFor.tool('fs', 'read_file')).toBe('mcp:fs:read_file');
    expect(resourceFor.resource('fs', 'file:///data/a.txt')).toBe('mcp-resource:fs:file:///data/a.txt');
    expect(resourceFor.prompt('git', 'summarize')).toBe('mcp-prompt:git:summarize');
    expect(resourceFor.serverRequest('fs', 'sampling')).toBe('mcp:fs:sampling');
    expect(resourceFor.nativeTool('calc')).toBe('tool:calc');
    expect(resourceFor.skill('docs', 'acme/billing/refunds')).toBe('mcp:docs:skill:acme/billing/refunds');
  });

  it('names a skill in one segment, so a rule on mcp:{server}:skill:* covers every skill and nothing else', () => {
    expect(() => resourceFor.skill('docs', 'a:b')).toThrow(/without ':'/);
    expect(() => resourceFor.skill('docs', '')).toThrow(/non-empty/);
    expect(() => resourceFor.skill('docs', 'x\u200by')).toThrow(/invisible/);
    const skill = resourceFor.skill('docs', 'acme/billing/refunds');
    expect(matches('mcp:docs:skill:*', skill)).toBe(true);
    expect(matches('mcp:docs:skill:acme/*', skill)).toBe(true);
    expect(matches('mcp:docs:*', skill)).toBe(false);
    const set = new CapabilitySet();
    set.grant('mcp:docs:skill:*', 'read');
    expect(set.check(skill, 'read').effect).toBe('allow');
    expect(set.check(skill, 'execute').effect).toBe('default-deny');
  });

  it('refuses a server name with a colon, which would shift the segments after it', () => {
    for (const build of [
      resourceFor.tool,
      resourceFor.resource,
      resourceFor.prompt,
      resourceFor.serverRequest,
      resourceFor.skill,
    ]) {
      expect(() => build('fs:evil', 'x')).toThrow(/without ':'/);
      expect(() => build('', 'x')).toThrow(/non-empty/);
    }
  });

  it('is the only place in src/ that writes a resource string', () => {
    const src = join(import.meta.dirname, '..', '..', 'src');
    // A template literal that builds a resource: `mcp:${…}:…`, `mcp-resource:${…}:…`, `mcp-prompt:${…}:…`,
    // `tool:${…`. (A bare `mcp:${server}` names a server in a message; no rule decides on it.)
    const built = /`(?:mcp|mcp-resource|mcp-prompt):\$\{[^}]*\}:|`tool:\$\{/;
    const offenders = (readdirSync(src, { recursive: true }) as string[])
      .filter((f) => f.endsWith('.ts') && f !== join('security', 'pattern.ts'))
      .filter((f) => built.test(readFileSync(join(src, f), 'utf8')));
    expect(offenders).toEqual([]);
  });
});

describe('pattern matching', () => {
  const table: [pattern: string, resource: string, expected: boolean][] = [
    ['mcp:fs:read_file', 'mcp:fs:read_file', true],
    ['mcp:fs:read_*', 'mcp:fs:read_file', true],
    ['mcp:fs:read_*', 'mcp:fs:read_', true],
    ['mcp:fs:read_*', 'mcp:fs:write_file', false],
    ['mcp:fs:*', 'mcp:fs:anything', true],
    ['mcp:*:read_file', 'mcp:github:read_file', true],
    ['mcp:*:*', 'mcp:a:b', true],
    ['mcp:**', 'mcp:a:b', true],
    ['mcp:fs:**', 'mcp:fs:a:b:c', true],
    ['mcp:fs:*', 'mcp:fs:a:b', false],
    ['mcp:fs:*_file', 'mcp:fs:read_file', true],
    ['mcp:fs:r*d*e', 'mcp:fs:read_file', true],
    // prefix confusion is impossible by construction
    ['mcp:git:*', 'mcp:github:x', false],
    ['mcp:srv:*', 'mcp:srv2:x', false],
    ['mcp:fs:read', 'mcp:fs:read_file', false],
    ['mcp:fs:read_file', 'mcp:fs:read', false],
    ['mcp:fs:**', 'mcp:fs2:x', false],
    ['mcp:fs:x', 'mcp-resource:fs:x', false],
    ['mcp-resource:fs:**', 'mcp-resource:fs:file:///data/a.txt', true],
    ['mcp-resource:fs:file:///data/*', 'mcp-resource:fs:file:///data/sub/a.txt', true],
    ['mcp-resource:fs:file:///data/*', 'mcp-resource:fs:file:///etc/passwd', false],
    ['mcp-resource:fs:http://[::1]/*', 'mcp-resource:fs:http://[::1]/x', true],
    // a URI may end with `**`: its prefix, then anything, colons included
    ['mcp-resource:fs:file:///secrets/**', 'mcp-resource:fs:file:///secrets/a:b', true],
    ['mcp-resource:fs:file:///secrets/**', 'mcp-resource:fs:file:///secrets/', true],
    ['mcp-resource:fs:file:///secrets/**', 'mcp-resource:fs:file:///secrets2/x', false],
    ['mcp-resource:fs:file:///secrets/*', 'mcp-resource:fs:file:///secrets/a:b', false],
    ['mcp-resource:fs:file:///d*/x/**', 'mcp-resource:fs:file:///data/x/y:z', true],
    ['mcp-resource:fs:file:///d*/x/**', 'mcp-resource:fs:file:///data/y/x/', true], // `*` crosses '/'
    ['mcp-resource:fs:file:///d*/x/**', 'mcp-resource:fs:file:///etc/x/', false],
    ['tool:calc', 'tool:calc', true],
    ['tool:*', 'tool:calc', true],
    ['tool:**', 'tool:a:b', true],
    // wildcard characters inside a resource are data, never a pattern
    ['mcp:fs:read_file', 'mcp:fs:read_*', false],
    ['mcp:fs:read?file', 'mcp:fs:read_file', false],
    ['mcp:fs:read?file', 'mcp:fs:read?file', true],
    ['mcp:fs:a*', 'mcp:fs:a*', true],
    ['mcp:fs:*', 'mcp:fs:*', true],
    // case, look-alikes and spaces are different names
    ['mcp:fs:read_file', 'mcp:fs:READ_FILE', false],
    ['mcp:fs:read_file', 'mcp:FS:read_file', false],
    ['mcp:fs:read_file', 'mcp:fs:rеad_file', false], // Cyrillic е
    ['mcp:fs:read_file', 'mcp:fs:read_file ', false],
    ['mcp:fs:read_file', 'mcp:fs: read_file', false],
    ['mcp:fs:read_file', 'mcp:fs:read\u200bfile', false],
    ['mcp:fs:*', 'mcp:fs:read_file\u0000', false],
    ['mcp:fs:*', 'mcp:fs:\u202eelif_daer', false],
    ['mcp:fs:*', 'mcp:fs:read\nfile', false],
  ];
  it.each(table)('%s against %j is %s', (pattern, resource, expected) => {
    expect(matches(pattern, resource)).toBe(expected);
  });
});

describe('malformed resources', () => {
  const table: [resource: unknown, reason: RegExp][] = [
    ['', /empty/],
    ['mcp', /no scheme/],
    ['MCP:fs:x', /unknown scheme/],
    ['http:fs:x', /unknown scheme/],
    ['mcp:fs', /non-empty server and name/],
    ['mcp::x', /non-empty server and name/],
    ['mcp:fs:', /non-empty server and name/],
    ['tool:', /name is empty/],
    ['mcp:fs:a\u200db', /invisible/],
    ['mcp:fs:a\ufeff', /invisible/],
    ['mcp:fs:\ud800', /invisible/],
    ['mcp-resource:fs:file:///data/../etc/passwd', /'\.\.' segment/],
    ['mcp-resource:fs:file:///data/%2e%2e/etc/passwd', /'\.\.' segment/],
    ['mcp-resource:fs:file:///data/./a', /'\.\.' segment/],
    [42, /not a string/],
  ];
  it.each(table)('denies %j as malformed', (resource, reason) => {
    const set = CapabilitySet.allowAll({ onWarning: () => {} });
    const d = set.check(resource as string, 'execute');
    expect(d).toMatchObject({ allowed: false, effect: 'default-deny' });
    expect(d.reason).toMatch(reason);
  });
});

describe('malformed patterns are rejected when the rule is added', () => {
  const table: [pattern: unknown, message: RegExp][] = [
    ['', /non-empty string/],
    ['mcp', /at least 3 segments/],
    ['mcp:fs', /did you mean 'mcp:fs:\*'/],
    ['mcp::x', /segment 2 is empty/],
    ['mcp:fs:', /segment 3 is empty/],
    ['tool:', /segment 2 is empty/],
    ['http:fs:x', /unknown scheme 'http'/],
    ['MCP:fs:x', /unknown scheme 'MCP'/],
    ['*:fs:x', /unknown scheme/],
    ['**', /unknown scheme/],
    ['mcp:fs:a**', /'\*\*' may only end a pattern/],
    ['mcp:**:x', /'\*\*' may only end a pattern/],
    ['mcp:git**', /'\*\*' may only end a pattern/],
    ['mcp-resource:fs**', /'\*\*' may only end a pattern/],
    ['mcp-resource:fs:file:///a/***', /'\*\*' may only end a pattern/],
    ['mcp-resource:fs:file:///a/**/b', /'\*\*' may only end a pattern/],
    ['mcp-resource:fs:file:///data/../**', /can never match/],
    ['mcp:fs:read_file ', /whitespace/],
    ['mcp: fs:x', /whitespace/],
    ['mcp:fs:read\u200bfile', /invisible/],
    ['mcp:fs:read\u0007', /invisible/],
    ['mcp-resource:fs:file:///data/../etc', /can never match/],
    ['x'.repeat(5000), /longer than/],
    [undefined, /non-empty string/],
  ];
  it.each(table)('rejects %j', (pattern, message) => {
    const set = new CapabilitySet();
    let error: unknown;
    try {
      set.grant(pattern as string, 'execute');
    } catch (err) {
      error = err;
    }
    expect(isInterlockError(error, 'INVALID_POLICY')).toBe(true);
    expect((error as Error).message).toMatch(message);
    expect(set.rules).toHaveLength(0);
  });

  it('rejects an action the scheme never uses, since such a rule could never match', () => {
    const set = new CapabilitySet();
    expect(() => set.deny('mcp:fs:delete_file', 'exec')).toThrow(/'exec' is not an action of 'mcp'/);
    expect(() => set.grant('mcp-resource:fs:**', 'execute')).toThrow(/use read or \*/);
    expect(() => set.grant('mcp:fs:*', [])).toThrow(/at least one action/);
    expect(() => set.grant('mcp:fs:*', 'exe cute')).toThrow(/not an action name/);
  });
});

describe('glob and cover helpers', () => {
  it('matches globs without exponential backtracking on hostile input', () => {
    const hostile = `${'a'.repeat(5000)}b`;
    expect(matchGlob('*a*a*a*a*a*a*a*c', hostile)).toBe(false);
    expect(matchGlob('*a*a*a*a*a*a*a*b', hostile)).toBe(true);
  });

  const covers: [parent: string, child: string, expected: boolean][] = [
    ['mcp:fs:*', 'mcp:fs:read_*', true],
    ['mcp:fs:read_*', 'mcp:fs:*', false],
    ['mcp:fs:read_*', 'mcp:fs:read_file', true],
    ['mcp:*:*', 'mcp:fs:x', true],
    ['mcp:**', 'mcp:fs:**', true],
    ['mcp:fs:**', 'mcp:**', false],
    ['mcp:fs:*', 'mcp:fs:**', false],
    ['mcp:fs:**', 'mcp:fs:*', true],
    ['mcp:git:*', 'mcp:github:*', false],
    ['mcp:g*:*', 'mcp:git*:*', true],
    ['mcp:git*:*', 'mcp:g*:*', false],
    ['mcp:*a:*', 'mcp:*:*', false],
    ['mcp:fs:*', 'mcp-prompt:fs:*', false],
    ['mcp-resource:fs:file:///data/**', 'mcp-resource:fs:file:///data/sub/**', true],
    ['mcp-resource:fs:file:///data/**', 'mcp-resource:fs:file:///data/a:b', true],
    ['mcp-resource:fs:file:///data/**', 'mcp-resource:fs:file:///dat**', false],
    ['mcp-resource:fs:file:///data/**', 'mcp-resource:fs:file:**', false],
    ['mcp-resource:fs:file:**', 'mcp-resource:fs:file:///data/**', true],
    ['mcp-resource:fs:**', 'mcp-resource:fs:file:///data/**', true],
    ['mcp-resource:fs:file:///data/*', 'mcp-resource:fs:file:///data/**', false],
  ];
  it.each(covers)('%s covers %s: %s', (parent, child, expected) => {
    expect(patternCovers(compilePattern(parent), compilePattern(child))).toBe(expected);
  });
});
