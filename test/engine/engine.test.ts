/**
 * The engine as a composition root: agents over real servers (the bundled notes and weather examples),
 * bindings replaced through options, configuration errors, offline plans, and closing everything.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentPolicy, scriptedPlan, startWeatherServer, today } from '../../examples/agent.js';
import { Engine } from '../../src/engine/index.js';
import { MCPClientManager, type MCPClientManagerOptions } from '../../src/interop/index.js';
import { CapabilitySet, MemoryAuditSink } from '../../src/security/index.js';
import { ScriptedProvider, scriptedModel, useTool, useTools } from '../../src/testing/index.js';
import { descendantPids, nodeFixture } from '../helpers/index.js';

const notesServer = {
  name: 'notes',
  transport: 'stdio' as const,
  command: process.execPath,
  args: [join(import.meta.dirname, '../../examples/servers/notes-server.mjs')],
};

let weather: Awaited<ReturnType<typeof startWeatherServer>>;
beforeAll(async () => {
  weather = await startWeatherServer();
});
afterAll(async () => {
  await weather.close();
  expect(descendantPids(process.pid)).toEqual([]);
});

/** Only the weather server may be running between tests. */
afterEach(() => {
  expect(descendantPids(process.pid)).toHaveLength(1);
});

describe('Engine.createAgent', () => {
  it('connects stdio and HTTP servers, runs the plan through the gate, and audits every decision', async () => {
    const audit = new MemoryAuditSink();
    await using engine = new Engine({ audit });
    const agent = await engine.createAgent({
      name: 'planner',
      model: scriptedModel(scriptedPlan),
      capabilities: agentPolicy,
      tools: [today],
      mcpServers: [notesServer, { name: 'weather', transport: 'http', url: weather.url }],
    });
    expect(agent.servers).toEqual({ notes: true, weather: true });
    expect(agent.tools.map((t) => `${t.source}:${t.name}`).sort()).toEqual([
      'mcp:mcp__notes__delete_note',
      'mcp:mcp__notes__list_notes',
      'mcp:mcp__notes__read_note',
      'mcp:mcp__notes__write_note',
      'mcp:mcp__weather__get_forecast',
      'mcp:mcp__weather__set_alert',
      'native:today',
    ]);
    expect(agent.tools.find((t) => t.name === 'today')?.resource).toBe('tool:today');
    expect(agent.visibleTools().map((t) => t.name)).not.toContain('mcp__notes__delete_note');

    const result = await agent.run('Plan a trip to Lisbon.');
    expect(result.status).toBe('completed');
    expect(result.steps.map((s) => [s.tool, s.decision])).toEqual([
      ['mcp__notes__list_notes', 'allow'],
      ['mcp__weather__get_forecast', 'allow'],
      ['today', 'allow'],
      ['mcp__notes__delete_note', 'deny'],
      ['mcp__notes__write_note', 'deny'],
      ['mcp__notes__write_note', 'allow'],
    ]);
    expect(result.steps[1]?.output).toContain('Forecast for Lisbon');
    expect(result.steps[3]).toMatchObject({
      ruleId: 'no-deletes',
      reason: expect.stringContaining('No agent deletes notes.'),
    });
    expect(result.output).toBe('Saved drafts/lisbon. 6 tool calls, 2 refused by policy.');
    expect(audit.records).toHaveLength(6);
    expect(new Set(audit.records.map((r) => r.agent))).toEqual(new Set(['planner']));
    expect(JSON.stringify(audit.records)).not.toContain('pack for rain');
  });

  it('passes each binding through: manager factory, clock, logger, named models and capability sets', async () => {
    const made: MCPClientManagerOptions[] = [];
    const warnings: string[] = [];
    const audit = new MemoryAuditSink();
    const fixed = Date.UTC(2030, 0, 2, 3, 4, 5);
    await using engine = new Engine({
      createManager: (options) => {
        made.push(options);
        return new MCPClientManager(options);
      },
      clock: () => fixed,
      audit,
      logger: { debug() {}, info() {}, warn: (m) => warnings.push(m), error() {} },
      models: { fast: scriptedModel([useTool('today'), 'done']) },
      defaultModel: 'fast',
      capabilitySets: {
        dates: { version: 1, rules: [{ effect: 'allow', resource: 'tool:today', actions: 'execute' }] },
      },
      maxTurns: 3,
    });
    const agent = await engine.createAgent({
      name: 'clock',
      capabilities: 'dates',
      tools: [today],
      mcpServers: [{ name: 'gone', transport: 'stdio', command: '/nonexistent/interlock-test-binary' }],
    });
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ agent: 'clock', capabilities: agent.capabilities });
    expect(agent.servers).toEqual({ gone: false });
    expect(warnings.join('\n')).toContain("server 'gone' did not connect");
    expect(agent.model.name).toBe('scripted');
    const result = await agent.run('date?');
    expect(result.steps[0]?.decision).toBe('allow');
    expect(audit.records[0]?.time).toBe('2030-01-02T03:04:05.000Z');
  });

  it('refuses bad options before starting anything, naming the field', async () => {
    await using engine = new Engine({ models: { a: scriptedModel(['x']) } });
    await expect(engine.createAgent({ name: 'bad name!', model: 'a' })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      issues: [expect.objectContaining({ path: 'createAgent.name' })],
    });
    await expect(engine.createAgent({ name: 'x', model: 'a', maxTurns: 0 })).rejects.toMatchObject({
      issues: [expect.objectContaining({ path: 'createAgent.maxTurns' })],
    });
    await expect(engine.createAgent({ name: 'x' })).rejects.toThrow(/has no model/);
    await expect(engine.createAgent({ name: 'x', model: 'b' })).rejects.toThrow(/model 'b'.*known: 'a'/);
    await expect(engine.createAgent({ name: 'x', model: 'a', capabilities: 'admin' })).rejects.toThrow(
      /capability set 'admin'/,
    );
    await expect(
      engine.createAgent({
        name: 'x',
        model: 'a',
        capabilities: { version: 1, rules: [{ effect: 'allow' }] },
      }),
    ).rejects.toMatchObject({ code: 'INVALID_POLICY' });
    await expect(
      engine.createAgent({
        name: 'x',
        model: 'a',
        mcpServers: [{ name: 'bad__name', transport: 'stdio', command: 'x' }],
      }),
    ).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    expect(() => new Engine({ maxTurns: -1 })).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
    expect(engine.agents).toEqual([]);
  });

  it('reads servers from an mcp.json file, and with requireAllServers fails when one is missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'interlock-engine-'));
    try {
      const file = join(dir, 'mcp.json');
      writeFileSync(
        file,
        JSON.stringify({
          mcpServers: {
            notes: { command: notesServer.command, args: notesServer.args },
            weather: { type: 'http', url: weather.url },
          },
        }),
      );
      await using engine = new Engine({ defaultModel: scriptedModel(['hi']) });
      const agent = await engine.createAgent({ name: 'files', mcpServers: file });
      expect(agent.servers).toEqual({ notes: true, weather: true });
      await agent.close();

      await expect(
        engine.createAgent({
          name: 'strict',
          requireAllServers: true,
          mcpServers: [
            notesServer,
            { name: 'gone', transport: 'stdio', command: '/nonexistent/interlock-test-binary' },
          ],
        }),
      ).rejects.toMatchObject({ code: 'CONNECTION_FAILED', message: expect.stringContaining("'gone'") });
      expect(engine.agents).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('checks a tool plan offline: registered schemas, a scripted model, no server', async () => {
    await using engine = new Engine();
    const agent = await engine.createAgent({
      name: 'offline',
      model: new ScriptedProvider([
        useTools(['mcp__github__get_issue', { number: 1 }], ['mcp__github__delete_repo', { repo: 'x' }]),
        'done',
      ]),
      capabilities: {
        version: 1,
        rules: [{ effect: 'allow', resource: 'mcp:github:get_*', actions: 'execute' }],
      },
    });
    agent.registerTools('github', [
      { name: 'get_issue', inputSchema: { type: 'object', properties: { number: { type: 'integer' } } } },
      { name: 'delete_repo', inputSchema: { type: 'object', properties: { repo: { type: 'string' } } } },
    ]);
    const result = await agent.run('tidy up');
    expect(result.steps.map((s) => [s.tool, s.decision, s.code])).toEqual([
      ['mcp__github__get_issue', 'allow', 'NOT_CONNECTED'],
      ['mcp__github__delete_repo', 'deny', 'CAPABILITY_DENIED'],
    ]);
  });

  it('closes every agent and sub-agent on close, and refuses new agents after', async () => {
    const engine = new Engine({ defaultModel: scriptedModel(['x']) });
    const a = await engine.createAgent({ name: 'a', mcpServers: [notesServer], capabilities: agentPolicy });
    const b = await engine.createAgent({
      name: 'b',
      mcpServers: [{ name: 'echo', transport: 'stdio', ...nodeFixture('echo') }],
    });
    const child = await a.spawn({
      name: 'a-child',
      capabilities: [{ effect: 'allow', resource: 'mcp:notes:list_notes', actions: 'execute' }],
    });
    expect(child.parent).toBe(a);
    expect(child.mcp).toBe(a.mcp);
    expect((await child.callTool('mcp__notes__list_notes')).text).toContain('drafts/welcome');
    expect(engine.agents).toEqual([a, b]);
    expect(descendantPids(process.pid)).toHaveLength(3);
    await engine[Symbol.asyncDispose]();
    expect([a.closed, b.closed, child.closed]).toEqual([true, true, true]);
    await expect(engine.createAgent({ name: 'late' })).rejects.toMatchObject({ code: 'CLOSED' });
    await expect(a.run('again')).rejects.toMatchObject({ code: 'CLOSED' });
    await engine.close();
  });

  it('keeps a sub-agent within its parent’s set while it shares the parent’s connection', async () => {
    await using engine = new Engine({ defaultModel: scriptedModel(['x']) });
    const parent = await engine.createAgent({
      name: 'parent',
      mcpServers: [notesServer],
      capabilities: CapabilitySet.fromPolicy(agentPolicy),
    });
    const child = await parent.spawn({
      name: 'drafter',
      capabilities: (set) => {
        set.grant('mcp:notes:write_note', 'execute', {
          when: { args: { id: { startsWith: 'drafts/child/' } } },
        });
      },
    });
    await expect(
      child.callTool('mcp__notes__write_note', { id: 'drafts/x', text: 't' }),
    ).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
    });
    expect(
      (await child.callTool('mcp__notes__write_note', { id: 'drafts/child/x', text: 't' })).isError,
    ).toBe(false);
    await expect(
      parent.spawn({
        name: 'rogue',
        capabilities: (set) => void set.grant('mcp:notes:delete_note', 'execute'),
      }),
    ).rejects.toMatchObject({ code: 'INVALID_POLICY' });
  });
});
