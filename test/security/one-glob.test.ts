// Issue 15: one glob matcher serves every filter (capability patterns, a server's tools.allow / deny /
// idempotent, the SSRF guard's `*.suffix` hosts). These properties check it against the matchers it replaced,
// kept here as the naive references, for every case each of them handled.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toolMatchesAny, toolPassesFilter } from '../../src/config/servers.js';
import { NetworkGuard, NetworkPolicyError } from '../../src/net/network.js';
import { matchGlob } from '../../src/security/pattern.js';

/** The tool-filter matcher config.ts had: split on `*`, then find the parts in order. */
function oldToolGlob(pattern: string, value: string): boolean {
  if (!pattern.includes('*')) return pattern === value;
  const parts = pattern.split('*');
  const first = parts[0] ?? '';
  const last = parts[parts.length - 1] ?? '';
  if (!value.startsWith(first) || value.length < first.length + last.length) return false;
  let pos = first.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const part = parts[i] ?? '';
    const found = value.indexOf(part, pos);
    if (found === -1) return false;
    pos = found + part.length;
  }
  return value.length - last.length >= pos && value.endsWith(last);
}

/** The host wildcard network.ts had: `*.suffix` is any host that ends with `.suffix`. */
function oldHostWildcard(entry: string, host: string): boolean {
  return host.endsWith(entry.slice(1));
}

// Small alphabets so that matches are frequent; `:` and `_` as in tool names, `.` and `-` as in host names.
const toolText = fc.string({ unit: fc.constantFrom('a', 'b', '_', ':', '.'), maxLength: 10 });
const globText = fc.string({ unit: fc.constantFrom('a', 'b', '_', ':', '.', '*'), maxLength: 8 });
const label = fc.string({ unit: fc.constantFrom('a', 'b', '-', '1'), minLength: 1, maxLength: 4 });
const hostName = fc.array(label, { minLength: 1, maxLength: 4 }).map((labels) => labels.join('.'));

describe('the one glob matcher', () => {
  it('matches tool names exactly as the old tool-filter matcher did, for any pattern', () => {
    fc.assert(
      fc.property(globText, toolText, (pattern, tool) => {
        expect(matchGlob(pattern, tool)).toBe(oldToolGlob(pattern, tool));
      }),
      { numRuns: 5000 },
    );
  });

  it('matches a `*.suffix` host exactly as the old host wildcard did', () => {
    fc.assert(
      fc.property(hostName, hostName, fc.boolean(), (suffix, host, related) => {
        const entry = `*.${suffix}`;
        // Half the hosts are built under the suffix, so both answers are exercised.
        const target = related ? `${host}.${suffix}` : host;
        expect(matchGlob(entry, target)).toBe(oldHostWildcard(entry, target));
      }),
      { numRuns: 5000 },
    );
  });

  it('filters tools with it: deny wins, allow limits, a pattern without `*` is an exact name', () => {
    const filter = { allow: ['read_*', 'list'], deny: ['*_secret'] };
    expect(toolPassesFilter(filter, 'read_file')).toBe(true);
    expect(toolPassesFilter(filter, 'list')).toBe(true);
    expect(toolPassesFilter(filter, 'list_all')).toBe(false);
    expect(toolPassesFilter(filter, 'read_secret')).toBe(false);
    expect(toolMatchesAny(['get_*'], 'get_')).toBe(true);
    expect(toolMatchesAny(['get_*'], 'forget_it')).toBe(false);
    expect(toolMatchesAny(undefined, 'anything')).toBe(false);
  });

  it('refuses hosts under a denied `*.suffix` and only those', () => {
    const guard = new NetworkGuard({ allowPrivate: true, denyHosts: ['*.internal.example'] });
    expect(() => guard.checkHost('api.internal.example')).toThrow(NetworkPolicyError);
    expect(() => guard.checkHost('a.b.INTERNAL.example')).toThrow(NetworkPolicyError);
    expect(() => guard.checkHost('internal.example')).not.toThrow();
    expect(() => guard.checkHost('notinternal.example')).not.toThrow();
  });
});
