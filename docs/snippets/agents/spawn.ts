// A sub-agent: a narrower set derived from its parent's, and the parent's live connections.
import { fileURLToPath } from 'node:url';
import { isInterlockError } from 'mcp-interlock';
import { Engine } from 'mcp-interlock/engine';
import { scriptedModel } from 'mcp-interlock/testing';

const notesServer = fileURLToPath(new URL('../../../examples/servers/notes-server.mjs', import.meta.url));

export async function main() {
  await using engine = new Engine({ defaultModel: scriptedModel(['ok']) });
  const lead = await engine.createAgent({
    name: 'lead',
    capabilities: {
      version: 1,
      rules: [
        { effect: 'allow', resource: 'mcp:notes:*', actions: 'execute' },
        { effect: 'deny', resource: 'mcp:notes:delete_*', actions: '*' },
      ],
    },
    mcpServers: [{ name: 'notes', transport: 'stdio', command: process.execPath, args: [notesServer] }],
  });

  // Rules are checked against the parent's: a rule it does not cover throws PolicyError (INVALID_POLICY).
  const reader = await lead.spawn({
    name: 'reader',
    capabilities: [{ effect: 'allow', resource: 'mcp:notes:read_note', actions: 'execute' }],
  });
  const read = await reader.callTool('mcp__notes__read_note', { id: 'drafts/welcome' });
  const write = await reader
    .callTool('mcp__notes__write_note', { id: 'drafts/x', text: 'y' })
    .catch((error: unknown) => (isInterlockError(error) ? error.code : 'unexpected'));
  // A child may name what its parent denies; the parent's deny still wins at every check.
  const greedy = await lead.spawn({
    name: 'greedy',
    capabilities: [{ effect: 'allow', resource: 'mcp:notes:delete_note', actions: 'execute' }],
  });
  const remove = await greedy
    .callTool('mcp__notes__delete_note', { id: 'team/roadmap' })
    .catch((error: unknown) => (isInterlockError(error) ? error.code : 'unexpected'));
  // A rule no rule of the parent covers is refused when the child is made.
  const outside = await lead
    .spawn({
      name: 'outside',
      capabilities: [{ effect: 'allow', resource: 'mcp:github:*', actions: 'execute' }],
    })
    .then(() => 'created')
    .catch((error: unknown) => (isInterlockError(error) ? error.code : 'unexpected'));
  return {
    read: read.text, // 'Welcome to the notes server.'
    write, // 'CAPABILITY_DENIED': the child's set is narrower
    remove, // 'CAPABILITY_DENIED': the parent's deny bounds the child
    outside, // 'INVALID_POLICY': a child can never exceed its parent
    sharesConnections: reader.mcp === lead.mcp, // true: no new process
  };
}
