/** Issue 14, item 5: percent-encoded traversal in resource URIs is refused, and patterns cannot be spelled so. */
import { describe, expect, it } from 'vitest';
import { PolicyError } from '../../src/errors.js';
import { CapabilitySet } from '../../src/security/capability-set.js';

function dataReader(): CapabilitySet {
  const caps = new CapabilitySet();
  caps.grant('mcp-resource:fs:file:///data/**', 'read');
  caps.deny('mcp-resource:fs:file:///data/secret/**', 'read', { id: 'no-secret' });
  return caps;
}

describe('percent-encoded resource URIs', () => {
  it.each([
    ['file:///data/%2e%2e%2fetc%2fpasswd', 'encodes'],
    ['file:///data/..%2fetc/passwd', 'path separator'],
    ['file:///data/..%5cetc\\passwd', 'path separator'],
    ['file:///data/%2E%2E/etc/passwd', "'.' or '..'"],
    ['file:///data/%252e%252e/etc/passwd', 'twice'],
    ['file:///data/%73ecret/key', "encodes 's'"],
    ['file:///data/%zz', 'two hex digits'],
    ['file:///data/a%00b', 'invisible'],
  ])('refuses %s as malformed (%s)', (uri, why) => {
    const decision = dataReader().check(`mcp-resource:fs:${uri}`, 'read');
    expect(decision.allowed).toBe(false);
    expect(decision.effect).toBe('default-deny');
    expect(decision.reason).toContain('not a well-formed resource');
    expect(decision.reason).toContain(why);
  });

  it('allows encodings a URI needs: spaces, a literal percent sign, non-ASCII', () => {
    const caps = dataReader();
    for (const uri of [
      'file:///data/my%20file.txt',
      'file:///data/100%25.txt',
      'file:///data/%E2%82%AC.csv',
    ]) {
      expect(caps.has(`mcp-resource:fs:${uri}`, 'read'), uri).toBe(true);
    }
  });

  it('refuses a pattern spelled with encodings a resource may not use, since it could never match', () => {
    const caps = new CapabilitySet();
    expect(() => caps.deny('mcp-resource:fs:file:///data/%73ecret/**', 'read')).toThrow(PolicyError);
    expect(() => caps.grant('mcp-resource:fs:file:///data/a%2fb', 'read')).toThrow(/path separator/);
    expect(() => caps.grant('mcp-resource:fs:file:///data/my%20docs/**', 'read')).not.toThrow();
  });
});
