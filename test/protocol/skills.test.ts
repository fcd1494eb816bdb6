/**
 * Issue 42: the name a skill is gated by (`mcp:{server}:skill:{name}`), taken from its `SKILL.md` URI. A name must
 * stay one unambiguous segment of a resource, so a URI whose path could not be named in a rule gives no name, and
 * the skill is never read.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { skillNameOf } from '../../src/protocol/skills.js';
import { resourceFor } from '../../src/security/pattern.js';

describe('skillNameOf', () => {
  it("is the skill's path: everything between scheme:// and /SKILL.md", () => {
    expect(skillNameOf('skill://pdf-processing/SKILL.md')).toBe('pdf-processing');
    expect(skillNameOf('skill://acme/billing/refunds/SKILL.md')).toBe('acme/billing/refunds');
    expect(skillNameOf('github://owner/repo/skills/refunds/SKILL.md')).toBe('owner/repo/skills/refunds');
  });

  it('reads the URI as the SDK canonicalizes it (dot segments resolved)', () => {
    expect(skillNameOf('skill://acme/x/../refunds/SKILL.md')).toBe('acme/refunds');
  });

  it('gives no name for what is no SKILL.md URI', () => {
    for (const uri of [
      'skill://pdf/README.md',
      'skill://pdf/skill.md',
      'not a uri',
      'skill:///SKILL.md',
      '',
    ]) {
      expect(skillNameOf(uri), uri).toBeUndefined();
    }
  });

  it('gives no name for a path a rule could not name unambiguously', () => {
    for (const uri of [
      'skill://a%3Ab/SKILL.md',
      'skill://acme/a b/SKILL.md',
      'skill://acme/x*y/SKILL.md',
      'skill://acme/x%2Fy/SKILL.md',
      'skill://acme/x?q=1/SKILL.md',
      'skill://acme/\u200bx/SKILL.md',
    ]) {
      expect(skillNameOf(uri), uri).toBeUndefined();
    }
  });

  it('only ever gives a name resourceFor.skill accepts, one segment without * or %', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (path) => {
        const name = skillNameOf(`skill://${path}/SKILL.md`);
        if (name === undefined) return;
        expect(name).toMatch(/^[A-Za-z0-9._~-]+(?:\/[A-Za-z0-9._~-]+)*$/);
        expect(resourceFor.skill('docs', name)).toBe(`mcp:docs:skill:${name}`);
      }),
    );
  });
});
