/**
 * Issue 13 "Tool definitions" and issue 18 item 3, through the manager against real servers: server-everything (a
 * third-party server with an outputSchema, structuredContent and resource_link results) and a hand-written fixture
 * that sends what no SDK server would (mismatched output, unsafe icons, remote and exploding `$ref`s).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInterlockError } from '../../src/errors.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { createFixtureLog, type FixtureLog, nodeFixture } from '../helpers/fixtures.js';
import { EVERYTHING_BIN, type HttpServerProcess, startModernHttp } from '../helpers/http-fixtures.js';

describe('server-everything: tool definitions and results carried through', () => {
  let manager: MCPClientManager;

  beforeAll(async () => {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:everything:get-structured-content', 'execute');
    capabilities.grant('mcp:everything:get-resource-links', 'execute');
    manager = new MCPClientManager({ capabilities });
    await manager.connectServer({
      name: 'everything',
      transport: 'stdio',
      command: process.execPath,
      args: [EVERYTHING_BIN, 'stdio'],
    });
  });

  afterAll(async () => {
    await manager?.close();
  });

  it('keeps title, annotations and outputSchema on the wrapper', () => {
    const tool = manager.tools.find((t) => t.name === 'mcp__everything__get-structured-content');
    expect(tool?.title).toBe('Get Structured Content Tool');
    expect(tool?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(tool?.outputSchema).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['temperature', 'conditions', 'humidity']),
    });
    expect(JSON.parse(JSON.stringify(tool))).toMatchObject({ title: 'Get Structured Content Tool' });
  });

  it('checks structuredContent against the outputSchema and passes a matching result on', async () => {
    const result = await manager.callTool('mcp__everything__get-structured-content', { location: 'Chicago' });
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toEqual({
      temperature: 36,
      conditions: 'Light rain / drizzle',
      humidity: 82,
    });
  });

  it('keeps resource_link blocks: in content, and named in the string (name, uri, mimeType)', async () => {
    const result = await manager.callTool('mcp__everything__get-resource-links', { count: 2 });
    const links = result.content.filter((c) => c.type === 'resource_link');
    expect(links).toHaveLength(2);
    for (const link of links) {
      if (link.type !== 'resource_link') continue;
      expect(result.text).toContain(`[resource link: ${link.name}, ${link.uri}`);
      if (link.mimeType !== undefined) expect(result.text).toContain(link.mimeType);
    }
  });
});

describe.each([{ transport: 'stdio' as const }, { transport: 'http' as const }])(
  'a 2026-07-28 server (SDK v2) over $transport: definitions carried, output checked once',
  ({ transport }) => {
    let server: HttpServerProcess | undefined;
    let manager: MCPClientManager;

    beforeAll(async () => {
      const capabilities = new CapabilitySet();
      capabilities.grant('mcp:modern:weather', 'execute');
      manager = new MCPClientManager({ capabilities });
      if (transport === 'stdio') {
        await manager.connectServer({ name: 'modern', transport: 'stdio', ...nodeFixture('modern') });
      } else {
        server = await startModernHttp();
        await manager.connectServer({ name: 'modern', transport: 'http', url: server.mcpUrl });
      }
    });

    afterAll(async () => {
      await manager?.close();
      await server?.close();
    });

    it('carries title, icons, annotations and outputSchema, and passes matching structuredContent', async () => {
      expect(manager.getConnection('modern')?.protocolVersion).toBe('2026-07-28');
      const weather = manager.getTool('mcp__modern__weather');
      expect(weather?.definition).toMatchObject({
        title: 'Weather',
        icons: [{ src: 'https://example.com/weather.png', mimeType: 'image/png' }],
        annotations: { readOnlyHint: true },
        outputSchema: { type: 'object', required: ['temperature', 'city'] },
      });
      const result = await manager.callTool('mcp__modern__weather', { city: 'Oslo' });
      expect(result).toMatchObject({ isError: false, structuredContent: { temperature: 21, city: 'Oslo' } });
    });
  },
);

describe('a server that breaks its own definitions', () => {
  let log: FixtureLog;
  let manager: MCPClientManager;
  const audit = new MemoryAuditSink();

  beforeAll(async () => {
    log = createFixtureLog();
    const capabilities = CapabilitySet.fromPolicy({
      version: 1,
      rules: [
        { id: 'weather', effect: 'allow', resource: 'mcp:defs:weather', actions: 'execute' },
        {
          id: 'data-only',
          effect: 'allow',
          resource: 'mcp:defs:read_file',
          actions: 'execute',
          maxCalls: 1,
          when: { args: { path: { startsWith: '/data' } } },
        },
        { id: 'no-remote', effect: 'deny', resource: 'mcp:defs:remote', actions: 'execute' },
        { id: 'links', effect: 'allow', resource: 'mcp:defs:links', actions: 'execute' },
      ],
    });
    manager = new MCPClientManager({ capabilities, audit });
    await manager.connectServer({
      name: 'defs',
      transport: 'stdio',
      ...nodeFixture('tool-defs'),
      env: log.env,
    });
  });

  afterAll(async () => {
    await manager?.close();
    await log?.close();
  });

  it('carries title and only https: and data:image/ icons; annotations stay as the server sent them', () => {
    const weather = manager.tools.find((t) => t.name === 'mcp__defs__weather');
    expect(weather?.title).toBe('Weather');
    expect(weather?.icons).toEqual([
      { src: 'https://example.com/weather.png', mimeType: 'image/png', sizes: ['48x48'], theme: 'light' },
      { src: 'data:image/svg+xml;base64,PHN2Zy8+', mimeType: 'image/svg+xml' },
    ]);
    expect(weather?.annotations).toEqual({
      title: 'Weather (from annotations)',
      readOnlyHint: true,
      openWorldHint: false,
    });
    expect(Object.isFrozen(weather?.icons)).toBe(true);
  });

  it('fails a result whose structuredContent does not match, naming the paths (our error, not the SDK client’s)', async () => {
    const err = await manager
      .callTool('mcp__defs__weather', { city: 'Oslo', mode: 'wrong' })
      .catch((e: unknown) => e);
    expect(isInterlockError(err, 'INVALID_TOOL_OUTPUT')).toBe(true);
    expect(err).toMatchObject({
      server: 'defs',
      issues: [
        { field: '/temperature', message: 'must be number' },
        { field: '/unit', message: 'must be one of ["C","F"]' },
      ],
    });
    expect((err as Error).message).toMatch(
      /^Tool 'mcp__defs__weather' returned a result that does not match its outputSchema: \/temperature: must be number; \/unit: must be one of/,
    );
  });

  it('fails a result without structuredContent, and lets an isError result through', async () => {
    const err = await manager
      .callTool('mcp__defs__weather', { city: 'Oslo', mode: 'missing' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'INVALID_TOOL_OUTPUT',
      issues: [{ field: '', message: 'is missing, though the tool declares an outputSchema' }],
    });
    const failed = await manager.callTool('mcp__defs__weather', { city: 'Atlantis', mode: 'error' });
    expect(failed).toMatchObject({ isError: true, text: 'Error: no such city' });
  });

  it('passes a matching result, with a local $ref in the output schema', async () => {
    const good = await manager.callTool('mcp__defs__weather', { city: 'Oslo' });
    expect(good).toMatchObject({ isError: false, structuredContent: { temperature: 21, unit: 'C' } });
  });

  it('refuses a remote $ref before sending, and an exploding output schema too', async () => {
    const before = log.toolCalls().length;
    const allow = new CapabilitySet();
    allow.grant('mcp:defs:*', 'execute');
    await using open = new MCPClientManager({ capabilities: allow });
    await open.connectServer({ name: 'defs', transport: 'stdio', ...nodeFixture('tool-defs'), env: log.env });
    const remote = await open.callTool('mcp__defs__remote', { a: 1 }).catch((e: unknown) => e);
    expect(remote).toMatchObject({ code: 'INVALID_TOOL_SCHEMA' });
    expect((remote as Error).message).toContain(
      `The input schema of tool 'mcp__defs__remote' of server 'defs' cannot be used: its $ref "https://example.com/schemas/a.json" at /properties/a names another document; Interlock never fetches schemas`,
    );
    const laughs = await open.callTool('mcp__defs__laughs', {}).catch((e: unknown) => e);
    expect(laughs).toMatchObject({ code: 'INVALID_TOOL_SCHEMA' });
    expect((laughs as Error).message).toMatch(
      /^The output schema of tool 'mcp__defs__laughs' .* more than 100000 subschemas/,
    );
    expect(log.toolCalls().length).toBe(before);
  });

  it('validates the arguments before argument conditions: a misspelt name is a schema error, sent nowhere, unaudited', async () => {
    const records = audit.records.length;
    for (let i = 0; i < 3; i++) {
      const err = await manager.callTool('mcp__defs__read_file', { pth: '/data/a' }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'INVALID_TOOL_INPUT' });
      expect((err as Error).message).toContain(
        "/path: is required; 'pth' is not an argument of this tool: did you mean 'path'?; /pth: is not an allowed property",
      );
    }
    expect(log.toolCalls('read_file')).toEqual([]);
    expect(audit.records.length).toBe(records);
  });

  it('explains the failed condition of a valid call, without advising an unconditional grant', async () => {
    const err = await manager
      .callTool('mcp__defs__read_file', { path: 'docs/a.txt' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CAPABILITY_DENIED' });
    expect((err as Error).message).toContain(
      `Rule 'data-only' allows 'execute' on 'mcp:defs:read_file' only when path starts with "/data"; for this call argument 'path' is a relative path`,
    );
    expect((err as Error).message).not.toContain('grant(');
    // maxCalls 1: the three schema errors above used none of it.
    await expect(manager.executeTool('mcp__defs__read_file', { path: '/data/a' })).resolves.toBe(
      'ok read_file {"path":"/data/a"}',
    );
  });

  it('still answers with the denial when an explicit deny applies or nothing could allow the call', async () => {
    // `remote`'s schema is unusable, but the deny decides first; `laughs` has no rule at all.
    const denied = await manager.callTool('mcp__defs__remote', { a: 1 }).catch((e: unknown) => e);
    expect(denied).toMatchObject({ code: 'CAPABILITY_DENIED', rule: { id: 'no-remote' } });
    const none = await manager.callTool('mcp__defs__laughs', { any: 1 }).catch((e: unknown) => e);
    expect(none).toMatchObject({ code: 'CAPABILITY_DENIED' });
    expect(audit.records.slice(-2).map((r) => [r.resource, r.allowed])).toEqual([
      ['mcp:defs:remote', false],
      ['mcp:defs:laughs', false],
    ]);
  });

  it('does not ask a human about a call whose arguments are wrong', async () => {
    const asked: string[] = [];
    const capabilities = new CapabilitySet();
    capabilities.ask('mcp:defs:read_file', 'execute', { id: 'ask-reads' });
    await using asking = new MCPClientManager({
      capabilities,
      approver: (request) => {
        asked.push(request.resource);
        return true;
      },
    });
    await asking.connectServer({
      name: 'defs',
      transport: 'stdio',
      ...nodeFixture('tool-defs'),
      env: log.env,
    });
    const err = await asking.callTool('mcp__defs__read_file', { pth: '/a' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INVALID_TOOL_INPUT' });
    expect(asked).toEqual([]);
    await expect(asking.executeTool('mcp__defs__read_file', { path: '/a' })).resolves.toBe(
      'ok read_file {"path":"/a"}',
    );
    expect(asked).toEqual(['mcp:defs:read_file']);
  });

  it('names links in the result string and keeps them in content', async () => {
    const result = await manager.callTool('mcp__defs__links', {});
    expect(result.text).toBe(
      'Two links:\n[resource link: a.md, file:///notes/a.md, text/markdown] Note A\n[resource link: b.png, https://example.com/b.png, image/png]',
    );
    expect(result.content.map((c) => c.type)).toEqual(['text', 'resource_link', 'resource_link']);
  });
});
