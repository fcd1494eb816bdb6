// A Cedar policy deciding behind the same gate as native rules, and a native policy exported to Cedar.
import { CapabilitySet, type Decision, policyToCedar } from 'mcp-interlock/security';

const policy = `
@id("notes-read") @description("Reading notes is harmless.")
permit (principal, action == Interlock::Action::"execute", resource is Interlock::Tool)
when { resource.server == "notes" && resource.name like "read_*" };

@id("drafts-only")
permit (principal, action == Interlock::Action::"execute", resource is Interlock::Tool)
when {
  resource.path == "mcp:notes:write_note" &&
  context.args.hasTag("folder") && context.args.getTag("folder") has string &&
  context.args.getTag("folder").string == "drafts"
};

@id("no-secrets")
forbid (principal, action, resource is Interlock::Tool) when { resource.name like "*secret*" };

@id("deploy") @ask
permit (principal in Interlock::Group::"ops", action, resource) when { resource.path == "mcp:ci:deploy" };
`;

export function main(): { decisions: Decision[]; exported: string } {
  // Parsed and validated against schema/interlock.cedarschema here: a policy that does not type-check throws.
  const caps = CapabilitySet.fromCedar(policy);
  const decisions = [
    caps.check('mcp:notes:read_note', 'execute'), // allow, by notes-read
    caps.check('mcp:notes:write_note', 'execute', { args: { folder: 'final' } }), // default-deny
    caps.check('mcp:notes:read_secret', 'execute'), // deny, by no-secrets: forbid wins
    caps.check('mcp:ci:deploy', 'execute', { groups: ['ops'] }), // ask: the approver decides
  ];
  const exported = policyToCedar({
    version: 1,
    rules: [{ id: 'notes-read', effect: 'allow', resource: 'mcp:notes:read_*', actions: 'execute' }],
  });
  return { decisions, exported };
}
