// An agent's native tools report their calls as MCP tools do on the manager: typed events and health figures.
import { type AgentSessionEvents, defineTool, Engine } from 'mcp-interlock/engine';
import { scriptedModel, useTool } from 'mcp-interlock/testing';
import { z } from 'zod';

const wordCount = defineTool({
  name: 'word_count',
  description: 'Counts the words of a text.',
  input: z.object({ text: z.string() }),
  execute: ({ text }) => String(text.split(/\s+/).filter(Boolean).length),
});

const wipe = defineTool({ name: 'wipe', description: 'Deletes every note.', execute: () => 'wiped' });

export async function main() {
  await using engine = new Engine();
  const agent = await engine.createAgent({
    name: 'editor',
    model: scriptedModel([
      useTool('word_count', { text: 'two words' }),
      useTool('word_count', { text: 42 }), // not a string: the zod schema refuses it
      useTool('wipe'), // no rule allows it
      'Two words; I could not wipe the notes.',
    ]),
    capabilities: {
      version: 1,
      rules: [{ effect: 'allow', resource: 'tool:word_count', actions: 'execute' }],
    },
    tools: [wordCount, wipe],
  });

  // Each call ends in one of these; `tool_call_started` precedes the calls the gate allowed.
  const log: string[] = [];
  const onCompleted = (e: AgentSessionEvents['tool_call_completed']) =>
    log.push(`${e.name} completed (${e.resultChars} chars)`);
  agent.on('tool_call_completed', onCompleted);
  agent.on('tool_call_failed', (e) => log.push(`${e.name} failed: ${e.code}`));
  agent.on('tool_call_denied', (e) => log.push(`${e.name} denied: ${e.code}`));

  await agent.run('Count the words, then wipe the notes.');
  agent.off('tool_call_completed', onCompleted);

  // Per native tool: calls, errors, callsInFlight, latencyMs.p50 / p95, and denied.
  const health = agent.nativeToolHealth();
  return {
    log,
    // ['word_count completed (1 chars)', 'word_count failed: INVALID_TOOL_INPUT', 'wipe denied: CAPABILITY_DENIED']
    wordCount: health.word_count, // { calls: 2, errors: 1, denied: 0, callsInFlight: 0, latencyMs: { p50, p95 } }
    wipe: health.wipe, // { calls: 0, errors: 0, denied: 1, ... }
  };
}
