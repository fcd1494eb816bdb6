// Handlers as createAgent options: the agent's servers ask through them, gated by the agent's capabilities
// and audited under the agent's name. An agent that sets none keeps the engine's managerOptions handlers.
import { createRequire } from 'node:module';
import { Engine } from 'mcp-interlock/engine';
import { MemoryAuditSink } from 'mcp-interlock/security';
import { scriptedModel, useTool } from 'mcp-interlock/testing';

const everything = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

export async function main() {
  const audit = new MemoryAuditSink();
  const askedBy: string[] = [];
  await using engine = new Engine({ audit });
  const agent = await engine.createAgent({
    name: 'signup',
    // A scripted model calls the tool whose server asks the user a question; a real one would decide to.
    model: scriptedModel([useTool('mcp__everything__trigger-elicitation-request'), { text: 'Signed up.' }]),
    capabilities: {
      version: 1,
      rules: [
        { effect: 'allow', resource: 'mcp:everything:trigger-elicitation-request', actions: 'execute' },
        { effect: 'allow', resource: 'mcp:everything:elicitation', actions: 'request' },
      ],
    },
    mcpServers: [
      { name: 'everything', transport: 'stdio', command: process.execPath, args: [everything, 'stdio'] },
    ],
    onElicitation: (request, { server }) => {
      // A real app renders a form for request.requestedSchema and says which server asks.
      askedBy.push(`${server}: ${request.message}`);
      return { action: 'accept', content: { name: 'Ada Lovelace', email: 'ada@example.com' } };
    },
  });
  const result = await agent.run('Sign me up.');
  return {
    answer: result.output, // 'Signed up.'
    askedBy, // ['everything: Please provide inputs for the following fields:']
    answered: result.steps[0]?.output.includes('"name": "Ada Lovelace"'), // true
    decision: audit.records
      .filter((r) => r.action === 'request')
      .map((r) => `${r.agent} ${r.resource} ${r.allowed ? 'allowed' : 'denied'}`),
    // ['signup mcp:everything:elicitation allowed']
  };
}
