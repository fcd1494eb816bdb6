// The policy the gateway's flow tests decide with (issue 42), in code: the echo fixture's greeting resource stands
// for a private document, its `echo` tool and `greet` prompt for untrusted content, `add` for an egress tool. A flow rule denies
// `add` once both private and untrusted content entered the caller's flow state.
//
// Until the manager records results into the flow state it is given (the flow wiring of issue 42, another branch),
// each read records its own labels into the caller's state when the gate lets it through, in its `when` function;
// after the merge the rules can name labels in the policy (`labels:`) and leave the recording to the manager.
import { CapabilitySet } from '../../src/security/capability-set.js';
import type { FlowState } from '../../src/security/flow.js';

/** The rule that refuses egress after private and untrusted content (the "lethal trifecta"). */
export const TRIFECTA_RULE = 'no-egress-after-private-and-untrusted';

/** Allows a read in the caller's flow state, recording `labels` into it (fails closed without a state). */
function reading(source: string, labels: readonly string[]) {
  return (input: { flow?: FlowState | undefined }) => {
    if (input.flow === undefined) return false;
    input.flow.record(source, labels);
    return true;
  };
}

export function flowTestPolicy(): CapabilitySet {
  const set = new CapabilitySet();
  set.grant('mcp-resource:echo:fixture://greeting', 'read', {
    id: 'read-private-document',
    when: reading('mcp-resource:echo:fixture://greeting', ['private']),
  });
  set.grant('mcp:echo:echo', 'execute', {
    id: 'fetch-untrusted-page',
    when: reading('mcp:echo:echo', ['untrusted']),
  });
  set.grant('mcp-prompt:echo:greet', 'get', {
    id: 'untrusted-prompt',
    when: reading('mcp-prompt:echo:greet', ['untrusted']),
  });
  set.grant('mcp:echo:add', 'execute', { id: 'egress' });
  set.deny('mcp:echo:add', 'execute', {
    id: TRIFECTA_RULE,
    // No flow state: the deny applies (fails closed).
    when: (input) => input.flow === undefined || (input.flow.has('private') && input.flow.has('untrusted')),
  });
  return set;
}
