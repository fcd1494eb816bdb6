// A policy file (JSON here; YAML parses to the same object) and the round trip through toJSON.
import assert from 'node:assert/strict';
import { CapabilitySet } from 'mcp-interlock/security';

export const policyText = `{
  "version": 1,
  "rules": [
    { "id": "read", "effect": "allow", "resource": "mcp:github:get_*", "actions": "execute" },
    { "id": "issues", "effect": "allow", "resource": "mcp:github:create_issue", "actions": ["execute"],
      "maxCalls": 5, "expiresAt": "2099-01-01T00:00:00Z",
      "when": { "args": { "repo": { "oneOf": ["acme/web", "acme/api"] } } } },
    { "id": "merge", "effect": "ask", "resource": "mcp:github:merge_*", "actions": "execute" },
    { "id": "admin", "effect": "deny", "resource": "mcp:*:admin_*", "actions": "*",
      "description": "No admin tools, on any server." }
  ]
}`;

export function main() {
  const caps = CapabilitySet.fromPolicy(JSON.parse(policyText));
  assert.equal(caps.check('mcp:github:merge_pr', 'execute').effect, 'ask');
  assert.equal(caps.has('mcp:github:create_issue', 'execute', { args: { repo: 'acme/web' } }), true);

  // Round trip: the same rules, ids, limits and conditions.
  const again = CapabilitySet.fromPolicy(JSON.parse(JSON.stringify(caps)));
  assert.deepEqual(again.toJSON(), caps.toJSON());

  // A mistake names the rule and the field; nothing is loaded.
  let message = '';
  try {
    CapabilitySet.fromPolicy({
      version: 1,
      rules: [{ effect: 'allow', resource: 'mcp:github', actions: 'execute' }],
    });
  } catch (err) {
    message = (err as Error).message;
  }
  // "Invalid policy: rules[0].resource: Invalid pattern 'mcp:github': a 'mcp' resource has at least 3
  //  segments, so this can never match (did you mean 'mcp:github:*'?)."
  assert.match(message, /rules\[0\]\.resource/);
  return message;
}
