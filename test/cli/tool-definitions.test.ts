/**
 * Issue 18 item 3 and issue 13 at the terminal, as a real CLI process against the tool-defs fixture: a misspelt
 * argument exits 2 (schema error), a failed argument condition exits 3 with the rule and what failed, the tool's
 * title, icons, annotations and outputSchema show in `tools --json`, and a broken result is the server's error.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fixture, readFixtureLog } from '../helpers/fixtures.js';
import { allGone, type CliResult, json, runCli, type TempProject, tempProject } from './helpers.js';

let project: TempProject;
const results: CliResult[] = [];

beforeAll(() => {
  project = tempProject();
  project.write('interlock.config.yaml', {
    mcpServers: {
      defs: { command: process.execPath, args: [fixture('tool-defs')], env: { FIXTURE_LOG: project.log } },
    },
    policy: {
      version: 1,
      rules: [
        {
          id: 'data-only',
          effect: 'allow',
          resource: 'mcp:defs:read_file',
          actions: 'execute',
          description: 'Files under /data only.',
          when: { args: { path: { startsWith: '/data' } } },
        },
        { id: 'weather', effect: 'allow', resource: 'mcp:defs:weather', actions: 'execute' },
      ],
    },
  });
});

afterAll(() => project.close());

async function cli(args: string[]): Promise<CliResult> {
  const result = await runCli(args, { cwd: project.dir });
  results.push(result);
  return result;
}

afterEach(async () => {
  const pids = [...project.fixturePids(), ...results.splice(0).flatMap((r) => r.descendants)];
  expect(await allGone(pids)).toEqual([]);
});

describe('interlock call: arguments before argument conditions', () => {
  it('exits 2 for a misspelt argument name, naming it, and sends nothing', async () => {
    const result = await cli(['call', 'mcp__defs__read_file', '--args', '{"pth":"/data/a.txt"}']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "/path: is required; 'pth' is not an argument of this tool: did you mean 'path'?; /pth: is not an allowed property",
    );
    expect(result.stderr).not.toMatch(/denied/i);
    expect(project.fixturePids().length).toBeGreaterThan(0);
    expect(readFixtureLog(project.log).filter((e) => e.method === 'tools/call')).toEqual([]);
  });

  it('exits 3 for a relative path against an absolute-path condition, explaining the rule and what failed', async () => {
    const result = await cli(['call', 'mcp__defs__read_file', '--args', '{"path":"docs/a.txt"}']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(
      `Rule 'data-only' (Files under /data only) allows 'execute' on 'mcp:defs:read_file' only when path starts with "/data"; for this call argument 'path' is a relative path`,
    );
    expect(result.stderr).not.toContain('grant(');
  });
});

describe('interlock tools --json and call --json: what the server said about its tools', () => {
  it('shows title, safe icons, annotations and the outputSchema', async () => {
    const result = await cli(['tools', '--json']);
    expect(result.code).toBe(0);
    const { tools } = json<{ tools: Record<string, unknown>[] }>(result);
    expect(tools.find((t) => t.name === 'mcp__defs__weather')).toMatchObject({
      title: 'Weather',
      icons: [
        { src: 'https://example.com/weather.png', mimeType: 'image/png' },
        { src: 'data:image/svg+xml;base64,PHN2Zy8+' },
      ],
      annotations: { readOnlyHint: true, openWorldHint: false },
      outputSchema: { type: 'object', required: ['temperature'] },
    });
    expect(tools.find((t) => t.name === 'mcp__defs__read_file')).toMatchObject({
      title: null,
      icons: [],
      annotations: null,
      outputSchema: null,
    });
  });

  it('exits 1 with INVALID_TOOL_OUTPUT when structuredContent breaks the outputSchema', async () => {
    const result = await cli([
      'call',
      'mcp__defs__weather',
      '--args',
      '{"city":"Oslo","mode":"wrong"}',
      '--json',
    ]);
    expect(result.code).toBe(1);
    expect(json(result)).toMatchObject({
      error: {
        code: 'INVALID_TOOL_OUTPUT',
        message: expect.stringContaining('/temperature: must be number'),
      },
    });
  });
});

describe('interlock check: the same order as call', () => {
  it('exits 2 for a misspelt argument of a conditionally allowed tool, 3 when the condition fails', async () => {
    const typo = await cli(['check', 'mcp__defs__read_file', '--args', '{"pth":"/data/a"}', '--json']);
    expect(typo.code).toBe(2);
    expect(json(typo)).toMatchObject({ inputIssues: [{ field: '/path' }, { field: '/pth' }] });
    const relative = await cli(['check', 'mcp__defs__read_file', '--args', '{"path":"a.txt"}', '--json']);
    expect(relative.code).toBe(3);
    expect(json(relative)).toMatchObject({
      reason: expect.stringContaining(`argument 'path' is a relative path`),
    });
  });
});
