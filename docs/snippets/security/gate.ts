// The gate: decide, ask a human for `ask` rules, audit every decision, and throw when denied.
import assert from 'node:assert/strict';
import {
  type AccessRequest,
  CapabilityGate,
  CapabilitySet,
  MemoryAuditSink,
  resourceFor,
} from 'mcp-interlock/security';

export async function main() {
  const caps = new CapabilitySet();
  caps.grant('mcp:github:*', 'execute');
  caps.ask('mcp:github:merge_*', 'execute', { description: 'merges need a human' });

  const audit = new MemoryAuditSink({ capacity: 1000 });
  const gate = new CapabilityGate({
    capabilities: caps,
    audit,
    // Resolve true to allow this one call. Without an approver, ask is deny.
    approver: async (request) => request.context?.agent === 'release-bot',
    redact: (args) => ({ ...args, token: '[redacted]' }), // without it, records keep argument names only
  });

  const merge = (agent: string): AccessRequest => ({
    resource: resourceFor.tool('github', 'merge_pr'),
    action: 'execute',
    context: { args: { pr: 42, token: 'ghp_secret' }, agent },
    server: 'github',
    tool: 'merge_pr',
  });
  await gate.authorize(merge('release-bot')); // approved
  await assert.rejects(gate.authorize(merge('intern')), { code: 'CAPABILITY_DENIED' });

  const [approved, declined] = audit.records;
  assert.equal(approved?.approved, true);
  assert.equal(declined?.allowed, false);
  assert.equal(JSON.stringify(audit.records).includes('ghp_secret'), false);
  return audit.records;
}
