/**
 * Handlers for server requests as `createAgent` options: an agent's servers ask their questions through the
 * agent's own handlers, gated by the agent's own capabilities; an agent that sets none keeps the engine's.
 */
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import { CapabilitySet, MemoryAuditSink } from '../../src/security/index.js';
import { scriptedModel, useTool } from '../../src/testing/index.js';
import { nodeFixture } from '../helpers/index.js';

const modern = { name: 'srv', transport: 'stdio' as const, ...nodeFixture('modern') };

function policy(...requests: string[]) {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:srv:*', 'execute');
  for (const kind of requests) capabilities.grant(`mcp:srv:${kind}`, 'request');
  return capabilities;
}

describe('createAgent server request handlers', () => {
  it("answers an agent's elicitation and roots through the handlers it was created with", async () => {
    const audit = new MemoryAuditSink();
    await using engine = new Engine({ audit });
    const asked: string[] = [];
    const agent = await engine.createAgent({
      name: 'helper',
      model: scriptedModel([useTool('mcp__srv__ask'), useTool('mcp__srv__list_roots'), { text: 'done' }]),
      capabilities: policy('elicitation', 'roots'),
      mcpServers: [modern],
      onElicitation: (request, { server }) => {
        asked.push(`${server}: ${request.message}`);
        return { action: 'accept', content: { name: 'Ada' } };
      },
      roots: [{ uri: 'file:///work/project', name: 'project' }],
    });
    const result = await agent.run('Say hello.');
    expect(result.status).toBe('completed');
    expect(result.steps.map((s) => s.decision)).toEqual(['allow', 'allow']);
    expect(asked).toEqual(['srv: Who are you?']);
    const texts = result.steps.map((s) => s.output);
    expect(texts[0]).toContain('"name":"Ada"');
    expect(texts[1]).toContain('file:///work/project');
    expect(
      audit.records.filter((r) => r.action === 'request').map((r) => [r.agent, r.resource, r.allowed]),
    ).toEqual([
      ['helper', 'mcp:srv:elicitation', true],
      ['helper', 'mcp:srv:roots', true],
    ]);
  });

  it("uses the engine's handler for an agent that sets none, and the agent's own over it", async () => {
    await using engine = new Engine({
      managerOptions: {
        onSampling: () => ({
          role: 'assistant',
          model: 'engine',
          content: { type: 'text', text: 'from the engine' },
        }),
      },
    });
    const plain = await engine.createAgent({
      name: 'plain',
      model: scriptedModel([]),
      capabilities: policy('sampling'),
      mcpServers: [modern],
    });
    const own = await engine.createAgent({
      name: 'own',
      model: scriptedModel([]),
      capabilities: policy('sampling'),
      mcpServers: [modern],
      onSampling: () => ({
        role: 'assistant',
        model: 'own',
        content: { type: 'text', text: 'from the agent' },
      }),
    });
    await expect(plain.mcp.executeTool('mcp__srv__sample', {})).resolves.toContain('from the engine');
    await expect(own.mcp.executeTool('mcp__srv__sample', {})).resolves.toContain('from the agent');
  });
});
