import { spawn } from 'node:child_process';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectStdioFixture,
  createFixtureLog,
  ECHO_TOOL_NAMES,
  type FixtureLog,
  fixture,
  type SdkClientHandle,
  waitForExit,
  waitUntil,
} from '../helpers/index.js';

const PNG_SIGNATURE = '89504e470d0a1a0a';

describe('echo fixture over stdio', () => {
  let log: FixtureLog;
  let h: SdkClientHandle;

  beforeAll(async () => {
    log = createFixtureLog();
    h = await connectStdioFixture('echo', { env: { ...log.env, FIXTURE_SECRET: 's3cret' } });
  });
  afterAll(async () => {
    await h?.close();
    await log?.close();
  });

  it('lists every built-in tool, with an output schema on add', async () => {
    const { tools } = await h.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(ECHO_TOOL_NAMES);
    expect(tools.find((t) => t.name === 'add')?.outputSchema).toMatchObject({ properties: { sum: {} } });
  });

  it('echoes, adds with structured content, and reports tool errors as isError', async () => {
    expect(await h.client.callTool({ name: 'echo', arguments: { text: 'hi' } })).toEqual({
      content: [{ type: 'text', text: 'hi' }],
    });
    const sum = await h.client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    expect(sum).toMatchObject({ content: [{ type: 'text', text: '5' }], structuredContent: { sum: 5 } });
    const fail = await h.client.callTool({ name: 'fail', arguments: { message: 'nope' } });
    expect(fail).toEqual({ content: [{ type: 'text', text: 'nope' }], isError: true });
    const invalid = await h.client.callTool({ name: 'echo', arguments: { text: 1 } });
    expect(invalid.isError).toBe(true);
  });

  it('answers throw with a JSON-RPC error carrying the exact code, message and data', async () => {
    await expect(
      h.client.callTool({ name: 'throw', arguments: { message: 'kaboom', code: -32050 } }),
    ).rejects.toMatchObject({
      code: -32050,
      message: expect.stringContaining('kaboom'),
      data: { fixture: true },
    });
  });

  it('returns image, mixed and structured-only results', async () => {
    const image = await h.client.callTool({ name: 'image', arguments: {} });
    const part = (image.content as Array<{ type: string; data: string; mimeType: string }>)[0];
    expect(part?.mimeType).toBe('image/png');
    expect(
      Buffer.from(part?.data ?? '', 'base64')
        .subarray(0, 8)
        .toString('hex'),
    ).toBe(PNG_SIGNATURE);
    const mixed = await h.client.callTool({ name: 'mixed', arguments: {} });
    expect((mixed.content as Array<{ type: string }>).map((c) => c.type)).toEqual([
      'text',
      'image',
      'audio',
      'resource',
      'resource',
      'resource_link',
    ]);
    const structured = await h.client.callTool({ name: 'structured_only', arguments: {} });
    expect(structured).toEqual({ content: [], structuredContent: { value: 42, label: 'answer' } });
  });

  it('reads its env, reports its pid and sends progress when asked', async () => {
    const env = await h.client.callTool({ name: 'get_env', arguments: { name: 'FIXTURE_SECRET' } });
    expect(env.content).toEqual([{ type: 'text', text: 's3cret' }]);
    const unset = await h.client.callTool({ name: 'get_env', arguments: { name: 'NOPE_NOT_SET' } });
    expect(unset.content).toEqual([{ type: 'text', text: '<unset>' }]);
    const pid = await h.client.callTool({ name: 'pid', arguments: {} });
    expect(pid.content).toEqual([{ type: 'text', text: String(h.pid) }]);
    const seen: number[] = [];
    await h.client.callTool({ name: 'progress', arguments: { steps: 3, intervalMs: 10 } }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    // The SDK client may drop the last one when it shares a read with the response (see echo-tools.mjs).
    expect(seen.slice(0, 2)).toEqual([1, 2]);
  });

  it('stops slow when the request is cancelled, and logs that it saw the abort', async () => {
    const controller = new AbortController();
    const call = h.client.callTool({ name: 'slow', arguments: { ms: 60_000 } }, undefined, {
      signal: controller.signal,
    });
    await waitUntil(() => log.toolCalls('slow').length === 1);
    controller.abort();
    await expect(call).rejects.toThrow();
    await waitUntil(() => log.entries().some((e) => e.kind === 'event' && e.event === 'aborted'));
    expect(log.entries().some((e) => e.method === 'notifications/cancelled')).toBe(true);
  });

  it('adds, redescribes and removes tools at runtime, announcing each change', async () => {
    let changes = 0;
    h.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes++;
    });
    await h.client.callTool({ name: 'add_tool', arguments: { name: 'later' } });
    await h.client.callTool({ name: 'set_description', arguments: { tool: 'echo', description: 'changed' } });
    const { tools } = await h.client.listTools();
    expect(tools.find((t) => t.name === 'echo')?.description).toBe('changed');
    expect(await h.client.callTool({ name: 'later', arguments: { x: 1 } })).toMatchObject({
      content: [{ type: 'text', text: 'later {"x":1}' }],
    });
    await h.client.callTool({ name: 'remove_tool', arguments: { name: 'later' } });
    expect((await h.client.listTools()).tools.some((t) => t.name === 'later')).toBe(false);
    await waitUntil(() => changes === 3);
  });

  it('serves a text resource, a blob resource, a template and a prompt', async () => {
    const { resources } = await h.client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['fixture://greeting', 'fixture://blob']);
    const blob = await h.client.readResource({ uri: 'fixture://blob' });
    expect(blob.contents[0]).toMatchObject({ blob: Buffer.from([0, 1, 2, 3, 254, 255]).toString('base64') });
    const { resourceTemplates } = await h.client.listResourceTemplates();
    expect(resourceTemplates[0]?.uriTemplate).toBe('fixture://items/{id}');
    expect((await h.client.readResource({ uri: 'fixture://items/42' })).contents[0]).toMatchObject({
      text: 'item 42',
    });
    const prompt = await h.client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } });
    expect(prompt.messages[0]?.content).toEqual({ type: 'text', text: 'Hello, Ada!' });
  });

  it('logs each received request as a JSON line', () => {
    const first = log.entries()[0];
    expect(first).toMatchObject({ kind: 'request', method: 'initialize', pid: h.pid });
    expect(log.toolCalls('add')[0]).toMatchObject({ tool: 'add', args: { a: 2, b: 3 } });
  });
});

describe('echo fixture process lifetime', () => {
  it('prefixes tool names with FIXTURE_TOOL_PREFIX and exits when the client closes stdin', async () => {
    const h = await connectStdioFixture('echo', { env: { FIXTURE_TOOL_PREFIX: 'alpha_' } });
    const { tools } = await h.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(ECHO_TOOL_NAMES.map((n) => `alpha_${n}`));
    await h.close();
    expect(await waitForExit(h.pid!, 5_000)).toBe(true);
  });

  it('after FIXTURE_START_DELAY_MS answers on stdout with protocol lines only, and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, [fixture('echo')], {
      env: { ...process.env, FIXTURE_START_DELAY_MS: '100' },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    try {
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
      });
      const initialize = {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 't', version: '0' },
      };
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: initialize })}\n`,
      );
      await waitUntil(() => out.endsWith('\n'));
      const lines = out.trim().split('\n');
      expect(lines.map((l) => JSON.parse(l))).toEqual([expect.objectContaining({ jsonrpc: '2.0', id: 1 })]);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
