// A capability set: default deny, grants by pattern, and a deny that beats any grant.
import assert from 'node:assert/strict';
import { CapabilitySet } from 'mcp-interlock/security';

export function main() {
  const caps = new CapabilitySet();
  caps.grant('mcp:fs:read_*', 'execute'); // every read tool of server `fs`
  caps.grant('mcp-resource:fs:file:///data/**', 'read'); // resources under /data
  caps.deny('mcp:fs:read_secrets', 'execute', { id: 'no-secrets', description: 'never' });

  assert.equal(caps.has('mcp:fs:read_file', 'execute'), true);
  assert.equal(caps.has('mcp:fs:read_secrets', 'execute'), false); // deny beats the grant
  assert.equal(caps.has('mcp:fs:write_file', 'execute'), false); // nothing grants it: default deny
  assert.equal(caps.has('mcp-resource:fs:file:///data/q3/report.csv', 'read'), true);

  const decision = caps.check('mcp:fs:read_secrets', 'execute');
  // { allowed: false, effect: 'deny', ruleId: 'no-secrets', reason: "Denied by rule 'no-secrets' ...: never." }
  return decision;
}
