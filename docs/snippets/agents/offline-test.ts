// Test an agent's tool plan offline: registered schemas, a scripted model, no server, no network.
import { Engine } from 'mcp-interlock/engine';
import { MemoryAuditSink } from 'mcp-interlock/security';
import { scriptedModel, useTool, useTools } from 'mcp-interlock/testing';

// In a test suite, save a server's real `tools/list` answer to a JSON file once and load it here.
const githubTools = [
  { name: 'get_issue', inputSchema: { type: 'object', properties: { number: { type: 'integer' } } } },
  { name: 'close_issue', inputSchema: { type: 'object', properties: { number: { type: 'integer' } } } },
  { name: 'delete_repository', inputSchema: { type: 'object', properties: { repo: { type: 'string' } } } },
];

export async function main() {
  const audit = new MemoryAuditSink();
  await using engine = new Engine({ audit });
  const model = scriptedModel([
    useTools(['mcp__github__get_issue', { number: 7 }], ['mcp__github__delete_repository', { repo: 'app' }]),
    useTool('mcp__github__close_issue', { number: 7 }),
    ({ toolResults }) => `Closing gave: ${toolResults[0]?.content}`,
  ]);
  const agent = await engine.createAgent({
    name: 'triage',
    model,
    capabilities: {
      version: 1,
      rules: [
        { effect: 'allow', resource: 'mcp:github:*_issue', actions: 'execute' },
        { id: 'no-deletes', effect: 'deny', resource: 'mcp:github:delete_*', actions: '*' },
      ],
    },
  });
  agent.registerTools('github', githubTools);

  const result = await agent.run('Triage issue 7.');
  // In a test: expect(result.steps.map(...)).toEqual([...]) on exactly these.
  return {
    plan: result.steps.map((s) => [s.tool, s.decision, s.code ?? 'ok']),
    // [['mcp__github__get_issue', 'allow', 'NOT_CONNECTED'],       allowed: a live server would be called
    //  ['mcp__github__delete_repository', 'deny', 'CAPABILITY_DENIED'],
    //  ['mcp__github__close_issue', 'allow', 'NOT_CONNECTED']]
    shown: model.requests[0]?.tools.map((t) => t.name), // the model never sees delete_repository
    audited: audit.records.map((r) => `${r.resource} ${r.effect}`),
  };
}
