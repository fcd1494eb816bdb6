// The pattern grammar, as a table of pattern, resource and whether it matches.
import assert from 'node:assert/strict';
import { CapabilitySet } from 'mcp-interlock/security';

export const examples: [pattern: string, resource: string, matches: boolean][] = [
  ['mcp:fs:read_*', 'mcp:fs:read_file', true], // `*` is any run of characters but ':'
  ['mcp:*:search', 'mcp:github:search', true], // in any segment
  ['mcp:git:*', 'mcp:github:x', false], // segments compare whole: no prefix confusion
  ['mcp:srv:*', 'mcp:srv2:x', false],
  ['mcp:**', 'mcp:any:tool', true], // a final `**` takes the rest, colons included
  ['mcp-resource:fs:file:///data/*', 'mcp-resource:fs:file:///data/a/b.txt', true], // `*` crosses '/'
  ['mcp-resource:fs:file:///data/*', 'mcp-resource:fs:file:///data/a:b', false], // ... but not ':'
  ['mcp-resource:fs:file:///data/**', 'mcp-resource:fs:file:///data/a:b', true], // `**` ends a URI
  ['mcp:fs:read_file', 'mcp:fs:read_*', false], // in a resource, `*` is data
  ['mcp:fs:read_file', 'mcp:fs:READ_FILE', false], // names are case-sensitive
  ['mcp:fs:read_file', 'mcp:fs:read_file ', false], // and exact: a trailing space is another name
];

export function main() {
  for (const [pattern, resource, matches] of examples) {
    const caps = new CapabilitySet();
    caps.grant(pattern, '*');
    const action = resource.startsWith('mcp-resource:') ? 'read' : 'execute';
    assert.equal(caps.has(resource, action), matches, `${pattern} vs ${resource}`);
  }

  // Malformed patterns are refused when the rule is added, with a reason.
  const caps = new CapabilitySet();
  assert.throws(() => caps.grant('mcp:fs', 'execute'), /did you mean 'mcp:fs:\*'/);
  assert.throws(() => caps.grant('http:fs:x', 'execute'), /unknown scheme/);
  assert.throws(() => caps.grant('mcp:fs:*', 'get'), /not an action of 'mcp'/);
  return examples.length;
}
