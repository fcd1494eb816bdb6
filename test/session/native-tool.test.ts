/** Native tools: defined with zod, shown as JSON Schema, validated, gated on `tool:{name}` like MCP tools. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedProvider, useTool } from '../../src/providers/scripted.js';
import { CapabilitySet, MemoryAuditSink } from '../../src/security/index.js';
import { AgentSession } from '../../src/session/index.js';
import { defineTool } from '../../src/session/native-tool.js';

const getTime = defineTool({
  name: 'get_time',
  description: 'The current time in a timezone.',
  input: z.object({ tz: z.string().describe('IANA timezone') }),
  annotations: { readOnlyHint: true },
  execute: ({ tz }) => `12:00 in ${tz}`,
});

describe('defineTool', () => {
  it('turns the zod schema into the JSON Schema the model sees, and names its resource', () => {
    expect(getTime.inputSchema).toEqual({
      type: 'object',
      properties: { tz: { type: 'string', description: 'IANA timezone' } },
      required: ['tz'],
    });
    expect(getTime.resource).toBe('tool:get_time');
    expect(defineTool({ name: 'ping', description: 'Ping.', execute: () => 'pong' }).inputSchema).toEqual({
      type: 'object',
      properties: {},
    });
  });

  it('refuses names a model API would refuse, or that collide with the MCP namespace', () => {
    for (const name of ['', 'has space', 'a'.repeat(65), 'mcp__x__y', 'dot.name']) {
      expect(() => defineTool({ name, description: '', execute: () => '' })).toThrow(
        expect.objectContaining({ code: 'INVALID_CONFIG' }),
      );
    }
  });

  it('validates arguments, turns values into strings and throws into error results', async () => {
    const ctx = { agent: 'a', callId: 'c' };
    await expect(getTime.invoke({ tz: 3 }, ctx)).rejects.toMatchObject({
      code: 'INVALID_TOOL_INPUT',
      issues: [{ field: '/tz', message: expect.stringContaining('expected string') }],
    });
    expect(await getTime.invoke({ tz: 'UTC' }, ctx)).toMatchObject({ text: '12:00 in UTC', isError: false });
    const json = defineTool({ name: 'json', description: '', execute: () => ({ ok: true, n: 2 }) });
    expect((await json.invoke({}, ctx)).text).toBe('{"ok":true,"n":2}');
    const broken = defineTool({
      name: 'broken',
      description: '',
      execute: () => {
        throw new Error('disk full');
      },
    });
    expect(await broken.invoke({}, ctx)).toMatchObject({ text: 'Error: disk full', isError: true });
  });

  it('goes through the same gate as MCP tools, audited, with the model told why it was denied', async () => {
    const audit = new MemoryAuditSink();
    const capabilities = new CapabilitySet();
    capabilities.grant('tool:get_time', 'execute', {
      id: 'time-ok',
      when: { args: { tz: { oneOf: ['UTC'] } } },
    });
    const session = new AgentSession({
      name: 'clock',
      model: new ScriptedProvider([
        useTool('get_time', { tz: 'UTC' }),
        useTool('get_time', { tz: 'Mars/Olympus' }),
        useTool('secret', {}),
        'done',
      ]),
      capabilities,
      audit,
      tools: [getTime, defineTool({ name: 'secret', description: 'Not granted.', execute: () => 'leak' })],
    });
    try {
      const result = await session.run('what time is it?');
      expect(session.visibleTools().map((t) => t.name)).toEqual(['get_time']);
      expect(result.steps.map((s) => [s.tool, s.decision, s.isError, s.source])).toEqual([
        ['get_time', 'allow', false, 'native'],
        ['get_time', 'deny', true, 'native'],
        ['secret', 'deny', true, 'native'],
      ]);
      expect(result.steps[0]?.output).toBe('12:00 in UTC');
      expect(result.steps[1]?.output).toMatch(/^Error: Permission denied: 'execute' on 'tool:get_time'/);
      expect(result.steps[2]).toMatchObject({
        code: 'CAPABILITY_DENIED',
        reason: expect.stringContaining('tool:secret'),
      });
      expect(audit.records.map((r) => [r.resource, r.allowed, r.agent])).toEqual([
        ['tool:get_time', true, 'clock'],
        ['tool:get_time', false, 'clock'],
        ['tool:secret', false, 'clock'],
      ]);
      expect(JSON.stringify(audit.records)).not.toContain('Mars');
      await expect(session.callTool('secret')).rejects.toMatchObject({ code: 'CAPABILITY_DENIED' });
      expect((await session.callTool('get_time', { tz: 'UTC' })).text).toBe('12:00 in UTC');
    } finally {
      await session.close();
    }
  });

  it('refuses two native tools with one name', () => {
    expect(
      () => new AgentSession({ name: 'dup', model: new ScriptedProvider(['x']), tools: [getTime, getTime] }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
  });
});
