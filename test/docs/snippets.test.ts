/**
 * Every code sample the guides include is a real program: this suite imports each snippet under
 * docs/snippets/ (except security/, which test/docs/security-snippets.test.ts runs) and the README's
 * quickstart, runs it against real servers (the npm reference server `server-everything` over stdio,
 * Streamable HTTP and SSE on loopback ports), and checks what it returns.
 */
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as auto from '../../docs/snippets/connecting/auto.js';
import * as configFile from '../../docs/snippets/connecting/config-file.js';
import * as http from '../../docs/snippets/connecting/http.js';
import * as partialFailure from '../../docs/snippets/connecting/partial-failure.js';
import * as sse from '../../docs/snippets/connecting/sse.js';
import * as stdio from '../../docs/snippets/connecting/stdio.js';
import * as timeouts from '../../docs/snippets/connecting/timeouts.js';
import * as toolFilter from '../../docs/snippets/connecting/tool-filter.js';
import * as handleErrors from '../../docs/snippets/errors/handle-errors.js';
import * as defaultDeny from '../../docs/snippets/getting-started/default-deny.js';
import * as policyOffline from '../../docs/snippets/testing/policy-offline.js';
import * as registerTools from '../../docs/snippets/testing/register-tools.js';
import { type HttpServerProcess, startEverything } from '../helpers/index.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

describe('examples/quickstart.ts', () => {
  it('prints the echoed string and exits cleanly', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'examples/quickstart.ts'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe('Echo: hello');
  });
});

describe('getting started snippets', () => {
  it('default-deny: an ungranted tool is listed but its call is denied with what to grant', async () => {
    await expect(defaultDeny.main()).resolves.toEqual({
      listed: true,
      denied: true,
      code: 'CAPABILITY_DENIED',
      resource: 'mcp:everything:get-sum',
      action: 'execute',
    });
  });
});

describe('connecting servers snippets over stdio', () => {
  it('stdio: connects, lists namespaced tools and calls a granted one', async () => {
    const result = await stdio.main();
    expect(result.state).toBe('ready');
    expect(result.pid).toBeGreaterThan(0);
    expect(result.tools).toContain('mcp__everything__echo');
    expect(result.tools).toContain('mcp__everything__get-sum');
    expect(result.sum).toBe('The sum of 2 and 3 is 5.');
  });

  it('tool-filter: exposes only the allowed tools, deny winning over allow', async () => {
    const tools = await toolFilter.main();
    expect(tools).toContain('echo');
    expect(tools).toContain('get-sum');
    expect(tools).not.toContain('get-env');
    expect(tools).not.toContain('gzip-file-as-resource');
    for (const tool of tools) expect(tool === 'echo' || tool.startsWith('get-')).toBe(true);
  });

  it('config-file: loads mcp.json, names the unset variable, connects the enabled server only', async () => {
    const result = await configFile.main();
    expect(result.missing).toEqual([
      expect.objectContaining({ path: 'mcpServers.github.headers.Authorization' }),
    ]);
    expect(result.servers).toEqual(['everything: stdio', 'github: http']);
    expect(result.connected).toEqual({ everything: true, github: false });
  });

  it('timeouts: a call past its deadline times out, an aborted one is cancelled, events report both', async () => {
    await expect(timeouts.main()).resolves.toEqual({
      timedOut: 'REQUEST_TIMEOUT',
      cancelled: 'REQUEST_CANCELLED',
      events: [
        'connected: everything over stdio',
        'failed: trigger-long-running-operation with REQUEST_TIMEOUT',
        'failed: trigger-long-running-operation with REQUEST_CANCELLED',
      ],
    });
  });

  it('partial-failure: a broken server fails alone with CONNECTION_FAILED', async () => {
    const result = await partialFailure.main();
    expect(result.connected).toEqual({ everything: true, broken: false });
    expect(result.state).toBe('failed');
    expect(result.code).toBe('CONNECTION_FAILED');
    expect(result.tools).toBeGreaterThan(5);
  });
});

describe('connecting servers snippets over HTTP', () => {
  let streamable: HttpServerProcess | undefined;
  let legacy: HttpServerProcess | undefined;

  beforeAll(async () => {
    [streamable, legacy] = await Promise.all([startEverything('streamableHttp'), startEverything('sse')]);
  }, 60_000);
  afterAll(async () => {
    await Promise.allSettled([streamable?.close(), legacy?.close()]);
  });

  it('http: calls a tool over Streamable HTTP', async () => {
    await expect(http.main(streamable!.mcpUrl)).resolves.toEqual({
      transport: 'http',
      reply: 'Echo: over Streamable HTTP',
    });
  });

  it('sse: calls a tool over HTTP+SSE', async () => {
    await expect(sse.main(legacy!.sseUrl)).resolves.toEqual({ transport: 'sse', reply: 'Echo: over SSE' });
  });

  it('auto: uses Streamable HTTP when the server speaks it', async () => {
    await expect(auto.main(streamable!.mcpUrl)).resolves.toEqual({ transport: 'http' });
  });

  it('auto: falls back to SSE for a server that only speaks SSE', async () => {
    await expect(auto.main(legacy!.sseUrl)).resolves.toEqual({ transport: 'sse' });
  });
});

describe('testing offline snippets', () => {
  it('register-tools: offline wrappers carry the live names and the schemas', async () => {
    await expect(registerTools.main()).resolves.toEqual([
      { name: 'mcp__github__get_issue', offline: true, required: ['owner', 'repo', 'number'] },
      { name: 'mcp__github__delete_repository', offline: true, required: ['owner', 'repo'] },
    ]);
  });

  it('policy-offline: the gate, then validation, then the missing connection decide', async () => {
    await expect(policyOffline.main()).resolves.toEqual({
      deleteRepository: 'CAPABILITY_DENIED',
      badArguments: 'INVALID_TOOL_INPUT',
      allowed: 'NOT_CONNECTED',
    });
  });
});

describe('error code snippets', () => {
  it('handle-errors: branches on codes and uses each error’s details', async () => {
    await expect(handleErrors.main()).resolves.toEqual([
      'TOOL_NOT_FOUND: did you mean mcp__fs__read_file?',
      "CAPABILITY_DENIED: grant 'execute' on 'mcp:fs:read_file' to allow it",
    ]);
  });
});
