/** Denial reasons say what to change: the rule that would allow the call, or how to grant it. */
import { describe, expect, it } from 'vitest';
import { CapabilitySet } from '../../src/security/capability-set.js';

describe('denial reasons', () => {
  it('names the allow rule whose argument condition did not hold, with its description', () => {
    const set = CapabilitySet.fromPolicy({
      version: 1,
      rules: [
        {
          id: 'drafts-only',
          effect: 'allow',
          resource: 'mcp:notes:write_note',
          actions: 'execute',
          description: 'Agents may only write drafts.',
          when: { args: { id: { startsWith: 'drafts/' } } },
        },
      ],
    });
    const decision = set.check('mcp:notes:write_note', 'execute', { args: { id: 'team/x' } });
    expect(decision.effect).toBe('default-deny');
    expect(decision.reason).toContain("Rule 'drafts-only' (Agents may only write drafts) allows");
    expect(decision.reason).toContain('only when its condition holds');
    expect(set.check('mcp:notes:write_note', 'execute', { args: { id: 'drafts/x' } }).allowed).toBe(true);
  });

  it('says how to grant a call no rule covers', () => {
    expect(new CapabilitySet().check('mcp:fs:read', 'execute').reason).toContain(
      "grant('mcp:fs:read', 'execute')",
    );
  });

  it('does not double the full stop of a description ending in one', () => {
    const set = new CapabilitySet();
    set.deny('mcp:vault:*', 'execute', { description: 'No secrets.' });
    const { reason } = set.check('mcp:vault:read', 'execute');
    expect(reason).toMatch(/No secrets\.$/);
    expect(reason).not.toContain('..');
  });
});
