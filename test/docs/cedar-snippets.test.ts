/** The policy lifecycle guide's Cedar example is a program: this runs it and checks what the guide says it does. */
import { describe, expect, it } from 'vitest';
import * as cedar from '../../docs/snippets/policy-lifecycle/cedar.js';

describe('policy lifecycle guide snippets', () => {
  it('cedar: allow, default deny, forbid wins, ask; and the export', () => {
    const { decisions, exported } = cedar.main();
    expect(decisions.map((d) => [d.effect, d.ruleId])).toEqual([
      ['allow', 'notes-read'],
      ['default-deny', undefined],
      ['deny', 'no-secrets'],
      ['ask', 'deploy'],
    ]);
    expect(exported).toMatch(
      /@id\("notes-read"\)\npermit \(principal, action == Interlock::Action::"execute", resource\)\nwhen \{\n {2}resource\.depth == 3 && resource\.path like "mcp:notes:read_\*"\n\};/,
    );
  });
});
