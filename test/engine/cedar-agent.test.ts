/**
 * An agent whose capabilities are a Cedar policy (issue 40), over a real MCP server (the echo fixture over
 * stdio): a call Cedar denies never reaches the server, a permitted one does, the audit record names the Cedar
 * policy, and the listing hides what no request could be allowed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import { MemoryAuditSink } from '../../src/security/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { fixture, readFixtureLog } from '../helpers/fixtures.js';
import { descendantPids } from '../helpers/index.js';

const CEDAR = `
@id("echo-only") permit (principal == Interlock::Agent::"cedar-agent", action == Interlock::Action::"execute", resource in Interlock::Server::"echo")
when { resource.name == "echo" || resource.name == "add" };

@id("no-big-sums") forbid (principal, action, resource)
when {
  resource.path == "mcp:echo:add" &&
  context.args.hasTag("a") && context.args.getTag("a") has long && context.args.getTag("a").long > 100
};
`;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  expect(descendantPids(process.pid)).toEqual([]);
});

describe('an agent with a Cedar policy', () => {
  it('sends only what Cedar permits: a denied call never reaches the server', {
    timeout: 120_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'interlock-cedar-'));
    dirs.push(dir);
    const log = join(dir, 'fixture.jsonl');
    const audit = new MemoryAuditSink();
    await using engine = new Engine({ audit, defaultModel: scriptedModel(['x']) });
    const agent = await engine.createAgent({
      name: 'cedar-agent',
      capabilities: { cedar: CEDAR },
      mcpServers: [
        {
          name: 'echo',
          transport: 'stdio',
          command: process.execPath,
          args: [fixture('echo')],
          env: { FIXTURE_LOG: log },
        },
      ],
    });
    const visible = agent.visibleTools().map((t) => t.name);
    expect(visible).toEqual(expect.arrayContaining(['mcp__echo__echo', 'mcp__echo__add']));
    expect(visible).not.toContain('mcp__echo__get_env');

    expect((await agent.callTool('mcp__echo__echo', { text: 'hi' })).text).toContain('hi');
    await expect(agent.callTool('mcp__echo__get_env', { name: 'HOME' })).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
      decision: { effect: 'default-deny' },
    });
    await expect(agent.callTool('mcp__echo__add', { a: 1000, b: 1 })).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
      decision: { effect: 'deny', ruleId: 'no-big-sums' },
    });
    expect((await agent.callTool('mcp__echo__add', { a: 1, b: 2 })).isError).toBe(false);

    const calls = readFixtureLog(log).filter((e) => e.method === 'tools/call');
    expect(calls.map((c) => [c.tool, c.args])).toEqual([
      ['echo', { text: 'hi' }],
      ['add', { a: 1, b: 2 }],
    ]);
    const decided = audit.records.map((r) => [r.tool ?? r.resource, r.effect, r.ruleId]);
    expect(decided).toEqual(
      expect.arrayContaining([
        [expect.stringMatching(/echo/), 'allow', 'echo-only'],
        [expect.stringMatching(/get_env/), 'default-deny', undefined],
        [expect.stringMatching(/add/), 'deny', 'no-big-sums'],
      ]),
    );
  });

  it('refuses a Cedar policy that does not type-check before starting anything', async () => {
    await using engine = new Engine({ defaultModel: scriptedModel(['x']) });
    await expect(
      engine.createAgent({
        name: 'bad',
        capabilities: { cedar: 'permit (principal, action, resource) when { resource.nope };' },
        mcpServers: [
          { name: 'echo', transport: 'stdio', command: process.execPath, args: [fixture('echo')] },
        ],
      }),
    ).rejects.toMatchObject({
      code: 'INVALID_POLICY',
      message: expect.stringMatching(/does not type-check/),
    });
  });
});
