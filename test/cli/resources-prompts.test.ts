/**
 * `interlock resources` and `interlock prompts` (issue 39) as real processes against real servers: the npm
 * reference server `server-everything` and our echo fixture (which logs every request it receives) over stdio.
 * Reads and prompts are gated like tool calls, with `call`'s exit codes, and a denied one never reaches its server.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fixture, readFixtureLog } from '../helpers/fixtures.js';
import { EVERYTHING_BIN } from '../helpers/http-fixtures.js';
import { allGone, type CliResult, json, runCli, type TempProject, tempProject } from './helpers.js';

let project: TempProject;
const results: CliResult[] = [];

beforeAll(() => {
  project = tempProject();
  project.write('interlock.config.yaml', {
    mcpServers: {
      everything: { command: process.execPath, args: [EVERYTHING_BIN, 'stdio'] },
      echo: { command: process.execPath, args: [fixture('echo')], env: { FIXTURE_LOG: project.log } },
    },
    policy: {
      version: 1,
      rules: [
        { id: 'docs', effect: 'allow', resource: 'mcp-resource:everything:demo://**', actions: 'read' },
        { id: 'weather', effect: 'allow', resource: 'mcp-prompt:everything:args-prompt', actions: 'get' },
        {
          id: 'no-embedding',
          effect: 'deny',
          resource: 'mcp-prompt:everything:resource-prompt',
          actions: 'get',
          description: 'no resources inside prompts',
        },
      ],
    },
  });
});

afterAll(() => project.close());

afterEach(async () => {
  expect(await allGone(results.splice(0).flatMap((r) => r.descendants))).toEqual([]);
});

async function cli(args: string[]): Promise<CliResult> {
  const result = await runCli(args, { cwd: project.dir });
  results.push(result);
  return result;
}

/** The methods of the requests the echo fixture received, in order. */
const readMethods = (): string[] =>
  readFixtureLog(project.log).flatMap((e) => (e.method === undefined ? [] : [e.method]));

interface Listed {
  server: string;
  verdict: string;
  rule: { id: string } | null;
}

describe('interlock resources', () => {
  it("lists every server's resources and templates with the policy's verdict", async () => {
    const result = await cli(['resources', '--json']);
    expect(result.code).toBe(0);
    const { resources, templates } = json<{
      resources: (Listed & { uri: string })[];
      templates: (Listed & { uriTemplate: string })[];
    }>(result);
    expect(resources).toContainEqual(
      expect.objectContaining({
        server: 'everything',
        uri: 'demo://resource/static/document/features.md',
        verdict: 'allowed',
        rule: expect.objectContaining({ id: 'docs' }),
      }),
    );
    expect(resources).toContainEqual(
      expect.objectContaining({ server: 'echo', uri: 'fixture://greeting', verdict: 'denied', rule: null }),
    );
    expect(templates).toContainEqual(
      expect.objectContaining({ server: 'echo', uriTemplate: 'fixture://items/{id}', verdict: 'denied' }),
    );
  });

  it('reads an allowed resource and prints its text (exit 0)', async () => {
    const result = await cli(['resources', 'read', 'demo://resource/dynamic/text/7']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Resource 7: This is a plaintext resource/);
  });

  it('refuses a resource no rule allows (exit 3) with the rule to add, and the server never gets the read', async () => {
    const result = await cli(['resources', 'read', 'fixture://greeting', '--server', 'echo']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(
      "denied: No rule allows 'read' on 'mcp-resource:echo:fixture://greeting' (default deny).",
    );
    expect(result.stderr).toContain('resource: mcp-resource:echo:fixture://greeting');
    expect(result.stdout).toBe('');
    expect(readMethods()).toContain('resources/list'); // it was connected and asked to list
    expect(readMethods()).not.toContain('resources/read');
  });

  it('names a URI no server has as a usage error (exit 2)', async () => {
    const result = await cli(['resources', 'read', 'nope://x', '--json']);
    expect(result.code).toBe(2);
    expect(json<{ error: { message: string } }>(result).error.message).toContain(
      "No connected server lists the resource 'nope://x'",
    );
  });
});

describe('interlock prompts', () => {
  it("lists every server's prompts by their exposed names, with the policy's verdict", async () => {
    const result = await cli(['prompts', '--json']);
    expect(result.code).toBe(0);
    const { prompts } = json<{ prompts: (Listed & { name: string })[] }>(result);
    expect(prompts).toContainEqual(
      expect.objectContaining({ name: 'mcp__everything__args-prompt', verdict: 'allowed' }),
    );
    expect(prompts).toContainEqual(
      expect.objectContaining({
        name: 'mcp__everything__resource-prompt',
        verdict: 'denied',
        rule: expect.objectContaining({ id: 'no-embedding' }),
      }),
    );
    expect(prompts).toContainEqual(expect.objectContaining({ name: 'mcp__echo__greet', verdict: 'denied' }));
  });

  it('gets an allowed prompt with its arguments and prints its messages (exit 0)', async () => {
    const result = await cli(['prompts', 'get', 'args-prompt', '--args', '{"city":"Paris"}']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("user: What's weather in Paris?\n");
  });

  it('refuses a prompt no rule allows (exit 3, --json) and the server never gets it', async () => {
    const result = await cli(['prompts', 'get', 'mcp__echo__greet', '--args', '{"name":"Ada"}', '--json']);
    expect(result.code).toBe(3);
    expect(json<{ error: Record<string, unknown> }>(result).error).toMatchObject({
      code: 'CAPABILITY_DENIED',
      resource: 'mcp-prompt:echo:greet',
      action: 'get',
      suggestedRule: { effect: 'allow', resource: 'mcp-prompt:echo:greet', actions: 'get' },
    });
    expect(readMethods()).not.toContain('prompts/get');
  });

  it('says which rule denies a prompt (exit 3)', async () => {
    const result = await cli([
      'prompts',
      'get',
      'everything/resource-prompt',
      '--args',
      '{"resourceType":"Text","resourceId":"1"}',
    ]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('no-embedding');
    expect(result.stderr).toContain('no resources inside prompts');
  });

  it('refuses arguments that are not strings before connecting (exit 2)', async () => {
    const result = await cli(['prompts', 'get', 'args-prompt', '--args', '{"city":3}']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Prompt arguments are strings; 'city' is not");
  });
});
