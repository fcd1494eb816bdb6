import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import {
  connectStdioFixture,
  createFixtureLog,
  nodeFixture,
  WEIRD_TOOL_NAMES,
  waitForExit,
  waitUntil,
} from '../helpers/index.js';

describe('paged fixture', () => {
  it('lists its tools in pages linked by nextCursor, and each tool answers its index', async () => {
    await using h = await connectStdioFixture('paged', {
      env: { FIXTURE_TOOL_COUNT: '7', FIXTURE_PAGE_SIZE: '3' },
    });
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await h.client.listTools(cursor === undefined ? {} : { cursor });
      pages.push(page.tools.map((t) => t.name));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(pages).toEqual([['t0', 't1', 't2'], ['t3', 't4', 't5'], ['t6']]);
    expect((await h.client.callTool({ name: 't5', arguments: {} })).content).toEqual([
      { type: 'text', text: '5' },
    ]);
  });
});

describe('weird-names fixture', () => {
  it('sends every awkward name through the SDK intact and echoes each one back', async () => {
    await using h = await connectStdioFixture('weird-names');
    const { tools } = await h.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(WEIRD_TOOL_NAMES);
    for (const name of WEIRD_TOOL_NAMES) {
      expect((await h.client.callTool({ name, arguments: {} })).content).toEqual([
        { type: 'text', text: name },
      ]);
    }
  });
});

describe('failing fixtures', () => {
  it('exit-at-start dies with code 1 and a fatal line on stderr before initialize completes', async () => {
    await expect(connectStdioFixture('exit-at-start')).rejects.toThrow(/fatal: cannot open database/);
  });

  it('hang-initialize never answers initialize, logs it, and exits when its stdin closes', async () => {
    await using log = createFixtureLog();
    const transport = new StdioClientTransport({
      ...nodeFixture('hang-initialize'),
      env: { ...getDefaultEnvironment(), ...log.env },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'hang', version: '0' });
    await expect(client.connect(transport, { timeout: 300 })).rejects.toThrow(/timed out/i);
    // The log names the pid: the SDK client already dropped its handle when connect failed.
    const initialize = await waitUntil(() => log.entries().find((e) => e.method === 'initialize'));
    await client.close();
    expect(await waitForExit(initialize.pid, 5_000)).toBe(true);
  });

  it('no-tools has no tools capability and answers tools/list with Method not found', async () => {
    await using h = await connectStdioFixture('no-tools');
    expect(h.client.getServerCapabilities()?.tools).toBeUndefined();
    expect(h.client.getServerCapabilities()?.prompts).toBeDefined();
    const { prompts } = await h.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['hello']);
    await expect(h.client.listTools()).rejects.toMatchObject({ code: -32601 });
  });
});
