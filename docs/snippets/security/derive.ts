// A sub-agent gets a derived set: it can narrow its parent, never widen it.
import assert from 'node:assert/strict';
import { CapabilitySet } from 'mcp-interlock/security';

export function main() {
  const parent = new CapabilitySet();
  const fs = parent.grant('mcp:fs:*', 'execute');
  parent.deny('mcp:fs:delete_*', 'execute');

  const researcher = parent.derive([{ effect: 'allow', resource: 'mcp:fs:read_*', actions: 'execute' }]);
  assert.equal(researcher.has('mcp:fs:read_file', 'execute'), true);
  assert.equal(researcher.has('mcp:fs:write_file', 'execute'), false); // not in the child

  // Asking for more than the parent has throws: it is never clamped silently.
  assert.throws(
    () => parent.derive([{ effect: 'allow', resource: 'mcp:github:*', actions: 'execute' }]),
    /more than the parent/,
  );

  // The parent decides at every check: its revoke reaches every descendant at once.
  const summarizer = researcher.derive((child) => {
    child.grant('mcp:fs:read_file', 'execute');
  });
  assert.equal(summarizer.has('mcp:fs:read_file', 'execute'), true);
  parent.revoke(fs);
  assert.equal(summarizer.has('mcp:fs:read_file', 'execute'), false);
  return summarizer.check('mcp:fs:read_file', 'execute');
}
