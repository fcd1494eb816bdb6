// An agent over a local MCP server and one native tool, under a policy, with a scripted model.
import { fileURLToPath } from 'node:url';
import { defineTool, Engine } from 'mcp-interlock/engine';
import { scriptedModel, useTool, useTools } from 'mcp-interlock/testing';
import { z } from 'zod';

const notesServer = fileURLToPath(new URL('../../../examples/servers/notes-server.mjs', import.meta.url));

// A native tool: TypeScript and a zod schema; its resource is `tool:word_count`.
const wordCount = defineTool({
  name: 'word_count',
  description: 'Counts the words of a text.',
  input: z.object({ text: z.string() }),
  execute: ({ text }) => String(text.split(/\s+/).filter(Boolean).length),
});

export async function main() {
  await using engine = new Engine();
  const agent = await engine.createAgent({
    name: 'editor',
    instructions: 'You edit notes. Only touch drafts.',
    // Any ModelProvider: OpenAIChatProvider, AnthropicProvider, or this script of model turns.
    model: scriptedModel([
      useTools(['mcp__notes__read_note', { id: 'team/roadmap' }], ['word_count', { text: 'two words' }]),
      useTool('mcp__notes__delete_note', { id: 'team/roadmap' }),
      'The roadmap has 9 words; I may not delete it.',
    ]),
    capabilities: {
      version: 1,
      rules: [
        { effect: 'allow', resource: 'mcp:notes:read_*', actions: 'execute' },
        { effect: 'allow', resource: 'tool:word_count', actions: 'execute' },
        { id: 'keep-notes', effect: 'deny', resource: 'mcp:notes:delete_*', actions: '*' },
      ],
    },
    tools: [wordCount],
    mcpServers: [{ name: 'notes', transport: 'stdio', command: process.execPath, args: [notesServer] }],
  });

  const result = await agent.run('How long is the roadmap? Then delete it.');
  return {
    servers: agent.servers, // { notes: true }
    shown: agent.visibleTools().map((t) => t.name), // what the model may see: never delete_note
    output: result.output,
    steps: result.steps.map((s) => `${s.tool}: ${s.decision}`),
    // ['mcp__notes__read_note: allow', 'word_count: allow', 'mcp__notes__delete_note: deny']
  };
}
