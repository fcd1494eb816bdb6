// Information flow in agents: a sub-agent's reads reach its parent, and the parent's post is refused after them.
import { fileURLToPath } from 'node:url';
import { isInterlockError } from 'mcp-interlock';
import { defineTool, Engine } from 'mcp-interlock/engine';
import { CapabilitySet } from 'mcp-interlock/security';
import { scriptedModel } from 'mcp-interlock/testing';
import { z } from 'zod';

const notesServer = fileURLToPath(new URL('../../../examples/servers/notes-server.mjs', import.meta.url));

// What each target brings into the context (content labels) and what it is as a destination (sink labels).
const PRIVATE = { content: ['private'], sink: [] };
const EGRESS = { content: [], sink: ['egress'] };
const NONE = { content: [], sink: [] };
const targetLabels = {
  labelsFor: (resource: string) =>
    resource === 'mcp:notes:read_note' ? PRIVATE : resource === 'tool:post' ? EGRESS : NONE,
};

// Reading notes and posting are both allowed; posting after private content entered the context is not.
const policy = new CapabilitySet();
policy.grant('mcp:notes:read_note', 'execute');
policy.grant('tool:post', 'execute');
policy.deny('tool:post', 'execute', {
  id: 'nothing-private-goes-out',
  description: 'Nothing goes out once private notes were read.',
  // Fails closed: without a flow state or the target's labels the deny applies.
  when: ({ flow, labels }) => !flow || !labels || (labels.includes('egress') && flow.has('private')),
});

const post = defineTool({
  name: 'post',
  description: 'Posts a message to a public channel.',
  input: z.object({ text: z.string() }),
  execute: ({ text }) => `posted: ${text}`,
});

export async function main() {
  await using engine = new Engine({
    defaultModel: scriptedModel(['ok']),
    managerOptions: { flowLabels: targetLabels },
  });
  const notes = {
    name: 'notes',
    transport: 'stdio' as const,
    command: process.execPath,
    args: [notesServer],
  };
  const lead = await engine.createAgent({
    name: 'lead',
    capabilities: policy,
    mcpServers: [notes],
    tools: [post],
  });
  const before = await lead.callTool('post', { text: 'hello' });

  // The sub-agent reads a note: it enters the sub-agent's flow state and its parent's.
  const scout = await lead.spawn({
    name: 'scout',
    capabilities: [{ effect: 'allow', resource: 'mcp:notes:read_note', actions: 'execute' }],
  });
  await scout.callTool('mcp__notes__read_note', { id: 'team/roadmap' });
  const after = await lead
    .callTool('post', { text: 'Q1: ship the capability gate.' })
    .catch((error: unknown) => (isInterlockError(error) ? error.code : 'unexpected'));

  // Another agent has read nothing: its post goes.
  const other = await engine.createAgent({ name: 'other', capabilities: policy, tools: [post] });
  const elsewhere = await other.callTool('post', { text: 'hello' });
  return {
    before: before.text, // 'posted: hello'
    lead: lead.flow.snapshot(), // { labels: ['private'], sources: ['mcp:notes:read_note'] }
    after, // 'CAPABILITY_DENIED'
    elsewhere: elsewhere.text, // 'posted: hello'
  };
}
