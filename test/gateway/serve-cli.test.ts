// `interlock serve` as a real process (issue 17): configured as a desktop client would (one stdio command
// line), over HTTP with a graceful drain on SIGTERM, and two gateway processes behind a round-robin proxy
// sharing one quota through a real redis-server.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  allGone,
  CLI,
  ROOT,
  type RunningCli,
  startCli,
  type TempProject,
  tempProject,
} from '../cli/helpers.js';
import { fixture, readFixtureLog } from '../helpers/fixtures.js';
import { redisForFile } from '../helpers/redis.js';
import { roundRobin } from '../helpers/round-robin.js';
import { waitUntil } from '../helpers/wait.js';

const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const KEY = 'gateway-test-key-0123456789';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function project(extra: Record<string, unknown> = {}): { dir: TempProject; file: string } {
  const dir = tempProject();
  cleanups.push(() => dir.close());
  const file = dir.write('interlock.config.yaml', {
    mcpServers: {
      echo: { command: process.execPath, args: [fixture('echo')], env: { FIXTURE_LOG: dir.log } },
    },
    policy: {
      version: 1,
      rules: [
        { effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] },
        { effect: 'allow', resource: 'mcp:echo:slow', actions: ['execute'] },
      ],
    },
    ...extra,
  });
  return { dir, file };
}

async function serveHttp(file: string, cwd: string): Promise<{ cli: RunningCli; url: URL }> {
  const cli = startCli(['--config', file, 'serve', '--http', '--port', '0'], { cwd });
  cleanups.push(async () => {
    if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    await cli.done;
  });
  await cli.waitFor(/listening on (\S+)/);
  const url = new URL(/listening on (\S+)/.exec(cli.stdout())?.[1] ?? '');
  return { cli, url };
}

async function modernClient(url: URL, key?: string) {
  const client = new ModernClient(
    { name: 'serve-test', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } },
  );
  const headers: Record<string, string> = key === undefined ? {} : { authorization: `Bearer ${key}` };
  await client.connect(new ModernHttp(url, { requestInit: { headers } }));
  return client;
}

describe('interlock serve on stdio, configured as a desktop client would', () => {
  it('lists and calls through the gateway, refuses what the policy does not allow, and leaves nothing behind', async () => {
    const { dir, file } = project();
    // The one line a desktop client's config holds: a command and its arguments.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', TSX, CLI, '--config', file, 'serve'],
      cwd: dir.dir,
      env: getDefaultEnvironment(),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'desktop', version: '1.0.0' });
    await client.connect(transport, { timeout: 30_000 });
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(tools).toEqual(['mcp__echo__echo', 'mcp__echo__slow']);
      const ok = await client.callTool({ name: 'mcp__echo__echo', arguments: { text: 'from the desktop' } });
      expect(JSON.stringify(ok.content)).toContain('from the desktop');
      // A tool the caller may not see answers as one that does not exist (issue 38).
      await expect(client.callTool({ name: 'mcp__echo__add', arguments: { a: 1, b: 2 } })).rejects.toThrow(
        /Unknown tool: mcp__echo__add/,
      );
      expect(
        readFixtureLog(dir.log)
          .filter((e) => e.method === 'tools/call')
          .map((e) => e.tool),
      ).toEqual(['echo']);
    } finally {
      await client.close();
    }
    // Closing the client ends the gateway, and the gateway ends its upstream server.
    expect(await allGone(dir.fixturePids())).toEqual([]);
  });
});

describe('interlock serve on stdio, relaying what upstream servers ask', () => {
  it("puts a server's elicitation and sampling requests to the desktop client, as its rules allow", async () => {
    const dir = tempProject();
    cleanups.push(() => dir.close());
    const file = dir.write('interlock.config.yaml', {
      mcpServers: { modern: { command: process.execPath, args: [fixture('modern')] } },
      policy: {
        version: 1,
        rules: [
          { effect: 'allow', resource: 'mcp:modern:ask', actions: ['execute'] },
          { effect: 'allow', resource: 'mcp:modern:sample', actions: ['execute'] },
          { effect: 'allow', resource: 'mcp:modern:elicitation', actions: ['request'] },
          // No rule allows sampling: the desktop client is never asked for it.
        ],
      },
    });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', TSX, CLI, '--config', file, 'serve'],
      cwd: dir.dir,
      env: getDefaultEnvironment(),
      stderr: 'pipe',
    });
    const client = new Client(
      { name: 'desktop', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} }, sampling: {} } },
    );
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(`elicit: ${request.params.message}`);
      return { action: 'accept', content: { name: 'Ada' } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      asked.push('sample');
      return { role: 'assistant', content: { type: 'text', text: 'never' }, model: 'm' };
    });
    await client.connect(transport, { timeout: 30_000 });
    try {
      const elicited = await client.callTool({ name: 'mcp__modern__ask', arguments: {} });
      expect(JSON.stringify(elicited.content)).toContain('Ada');
      expect(asked).toEqual(['elicit: Who are you?']);
      const sampled = await client.callTool({ name: 'mcp__modern__sample', arguments: {} });
      expect(sampled.isError).toBe(true);
      expect(JSON.stringify(sampled.content)).toContain('CAPABILITY_DENIED');
      expect(asked).toEqual(['elicit: Who are you?']);
    } finally {
      await client.close();
    }
  });
});

describe('the MCP Inspector CLI as the downstream client', () => {
  // The Inspector's command-line mode (@modelcontextprotocol/inspector-cli, the last line that runs on Node 20)
  // drives the gateway as any developer would: one process per method, over stdio and over HTTP.
  const INSPECTOR = join(ROOT, 'node_modules/@modelcontextprotocol/inspector-cli/build/index.js');

  function inspect(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      // It finds its own package.json by a path relative to the working directory: run it from its build folder.
      const cwd = dirname(INSPECTOR);
      const child = spawn(process.execPath, [INSPECTOR, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
      });
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
      });
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  it('lists and calls through `interlock serve` started as its stdio server', async () => {
    const { dir, file } = project();
    const serve = [process.execPath, '--import', TSX, CLI, '--config', file, 'serve'];
    const listed = await inspect([...serve, '--method', 'tools/list']);
    expect(listed.code, listed.stderr).toBe(0);
    const tools = (JSON.parse(listed.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(tools.sort()).toEqual(['mcp__echo__echo', 'mcp__echo__slow']);
    const called = await inspect([
      ...serve,
      '--method',
      'tools/call',
      '--tool-name',
      'mcp__echo__echo',
      '--tool-arg',
      'text=inspected',
    ]);
    expect(called.code, called.stderr).toBe(0);
    expect(called.stdout).toContain('inspected');
    expect(await allGone(dir.fixturePids())).toEqual([]);
  });

  it('calls through `interlock serve --http` with an API key, and is refused without one', async () => {
    const { dir, file } = project({ gateway: { auth: { apiKeys: [{ key: KEY, subject: 'dev' }] } } });
    const { url } = await serveHttp(file, dir.dir);
    const http = [url.href, '--transport', 'http'];
    const called = await inspect([
      ...http,
      '--header',
      `Authorization: Bearer ${KEY}`,
      '--method',
      'tools/call',
      '--tool-name',
      'mcp__echo__echo',
      '--tool-arg',
      'text=over http',
    ]);
    expect(called.code, called.stderr).toBe(0);
    expect(called.stdout).toContain('over http');
    const refused = await inspect([...http, '--method', 'tools/list']);
    expect(refused.code).not.toBe(0);
    expect(`${refused.stdout}${refused.stderr}`).toMatch(/401|Unauthorized|invalid_token/i);
  });
});

describe('interlock serve --http', () => {
  it('drains a call in flight on SIGTERM before it exits, and refuses new ones meanwhile', async () => {
    const { dir, file } = project();
    const { cli, url } = await serveHttp(file, dir.dir);
    const client = await modernClient(url);
    cleanups.push(() => client.close());
    const slow = client.callTool({ name: 'mcp__echo__slow', arguments: { ms: 1_500 } });
    // Wait until the upstream server has the call, then ask the gateway to stop.
    await waitUntil(() => readFixtureLog(dir.log).some((e) => e.tool === 'slow'));
    cli.child.kill('SIGTERM');
    const result = await slow;
    expect(result.isError).toBeFalsy();
    expect(JSON.stringify(result.content)).toContain('slept 1500');
    const done = await cli.done;
    expect(done.code).toBe(0);
    expect(await allGone(dir.fixturePids())).toEqual([]);
  });

  it('refuses to listen beyond loopback without gateway.auth, saying what to add', async () => {
    const { dir, file } = project();
    const cli = startCli(['--config', file, 'serve', '--http', '--host', '0.0.0.0', '--port', '0'], {
      cwd: dir.dir,
    });
    const done = await cli.done;
    expect(done.code).toBe(2);
    expect(done.stderr).toContain('gateway.auth');
  });
});

describe('two gateway processes behind a load balancer, one Redis', () => {
  const redis = redisForFile();

  it('holds one quota across both: exactly maxCalls calls succeed', async () => {
    // The quota lives in the project policy: 4 echo calls in total, whichever process serves them.
    const { dir, file } = project({
      state: { redis: { url: redis.current.url, keyPrefix: 'gw-test:' } },
      gateway: { auth: { apiKeys: [{ key: KEY, subject: 'ci' }] } },
      policy: {
        version: 1,
        rules: [
          { id: 'echo-quota', effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'], maxCalls: 4 },
        ],
      },
    });
    const a = await serveHttp(file, dir.dir);
    const b = await serveHttp(file, dir.dir);
    const proxy = await roundRobin([a.url, b.url]);
    cleanups.push(() => proxy.close());

    const results: boolean[] = [];
    for (let i = 0; i < 10; i++) {
      // A fresh client per call: no session, so each request may land on either process.
      const client = await modernClient(new URL(a.url.pathname, proxy.url), KEY);
      try {
        // A tool whose quota is used up is no longer listed, and answers as unknown (issue 38).
        const r = await client
          .callTool({ name: 'mcp__echo__echo', arguments: { text: `call ${i}` } })
          .catch(() => ({ isError: true }));
        results.push(r.isError !== true);
      } finally {
        await client.close();
      }
    }
    expect(results.filter(Boolean).length).toBe(4);
    expect(proxy.served()).toEqual(expect.arrayContaining([expect.any(Number), expect.any(Number)]));
    expect(proxy.served().every((n) => n > 0)).toBe(true);
  });
});
