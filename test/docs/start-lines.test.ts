/**
 * The documented start lines (issue 39). Outside a project, `npx interlock` resolves `interlock` on the registry,
 * an unrelated package, and without a terminal installs and runs it. Every line the docs give to start the CLI
 * names our package (`npx -y -p mcp-interlock interlock ...`), and here the documented lines run as a user runs
 * them: from folders outside this repository, against a registry on 127.0.0.1 that serves the packed tarball as
 * `mcp-interlock` (test/helpers/local-registry.ts), so nothing comes from the network:
 * - the gateway guide's desktop-client config, started the way a desktop client starts it, speaks MCP;
 * - the old line (`npx interlock`) asks the registry for `interlock`, which is what the new line never does;
 * - the gateway guide's MCP Inspector commands (docs/snippets/gateway/inspector.sh) list and call through the
 *   gateway over stdio and over HTTP, on this Node (CI runs it on Node 20, 22 and 24).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ROOT } from '../cli/helpers.js';
import { ensureBuilt } from '../helpers/build.js';
import { type LocalRegistry, startLocalRegistry } from '../helpers/local-registry.js';

const SNIPPETS = join(ROOT, 'docs/snippets/gateway');
/** Installs from the loopback registry and server starts on a loaded 2-core machine: a limit against hangs. */
const STEP_TIMEOUT_MS = 420_000;
const READER_KEY = 'reader-key-from-the-environment-0123';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}
const show = (r: Run): string => `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;

let work: string;
let registry: LocalRegistry;
/** A user's environment: npm reads only the loopback registry and a cache of its own. */
let env: NodeJS.ProcessEnv;
/** A folder outside any project, where a desktop client starts its servers. */
let outside: string;
/** The folder of a project file: the notes server, read_note allowed, one caller with READER_KEY. */
let project: string;

function userEnv(): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env };
  // What `npm test` sets for its own package would point a nested npm at this repository.
  for (const key of Object.keys(out)) {
    if (/^npm_/i.test(key) || key === 'INIT_CWD') delete out[key];
  }
  const npmrc = join(work, 'npmrc');
  writeFileSync(npmrc, '');
  return {
    ...out,
    npm_config_registry: registry.url,
    npm_config_cache: join(work, 'npm-cache'),
    npm_config_userconfig: npmrc,
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    READER_KEY,
  };
}

/** Runs a command line with `sh -c`, as a user's shell would; never throws for a non-zero exit. */
function sh(line: string, cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      '/bin/sh',
      ['-c', line],
      { cwd, env, timeout: STEP_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The commands of a shell snippet: comments and blank lines dropped, `\` continuations joined. */
function commands(file: string): string[] {
  return readFileSync(file, 'utf8')
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

beforeAll(async () => {
  await ensureBuilt();
  work = mkdtempSync(join(tmpdir(), 'interlock-start-lines-'));
  const packed = await new Promise<Run>((resolve) => {
    execFile(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', work],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : 1, stdout, stderr }),
    );
  });
  if (packed.code !== 0) throw new Error(`npm pack failed: ${show(packed)}`);
  const filename = (JSON.parse(packed.stdout) as { filename: string }[])[0]?.filename;
  if (filename === undefined) throw new Error(`npm pack named no tarball: ${show(packed)}`);
  registry = await startLocalRegistry(ROOT, join(work, filename));
  env = userEnv();
  outside = join(work, 'outside');
  project = join(work, 'project');
  mkdirSync(outside);
  mkdirSync(project);
  writeFileSync(
    join(project, 'interlock.config.yaml'),
    stringify({
      mcpServers: { notes: { command: 'node', args: [join(ROOT, 'examples/servers/notes-server.mjs')] } },
      policy: {
        version: 1,
        rules: [{ effect: 'allow', resource: 'mcp:notes:read_note', actions: 'execute' }],
      },
      gateway: { auth: { apiKeys: [{ key: '${READER_KEY}', subject: 'reader' }] } },
    }),
  );
}, STEP_TIMEOUT_MS);

afterAll(async () => {
  await registry?.close();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
}, 120_000);

/** Generated folders: the API reference (TypeDoc) and the mermaid bundle. */
const GENERATED = [join(ROOT, 'docs/reference/api'), join(ROOT, 'docs/assets')];

/** The files a user reads or copies: the README, the guides, their snippets and the examples. */
function documentedFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return GENERATED.includes(path) ? [] : walk(path);
      return /\.(md|json|ya?ml|sh|ts|mjs|js)$/.test(entry.name) ? [path] : [];
    });
  return [join(ROOT, 'README.md'), ...walk(join(ROOT, 'docs')), ...walk(join(ROOT, 'examples'))];
}

describe('documented start lines', () => {
  it('name mcp-interlock wherever a line starts the interlock command through npx', () => {
    const unnamed = [
      // npx interlock ..., npx --yes interlock ...: whatever `interlock` the registry has.
      /\bnpx\s+(?:-\S+\s+)*interlock\b/,
      // "command": "npx", "args": ["interlock", ...] (JSON, YAML or TypeScript)
      /command["']?\s*:\s*["']npx["']\s*,\s*["']?args["']?\s*:\s*\[\s*(?:["']-[^"']*["']\s*,\s*)*["']interlock["']/,
    ];
    const found: string[] = [];
    for (const file of documentedFiles()) {
      const text = readFileSync(file, 'utf8');
      for (const pattern of unnamed) {
        const match = pattern.exec(text);
        if (match !== null) found.push(`${relative(ROOT, file).split(sep).join('/')}: ${match[0]}`);
      }
    }
    expect(found).toEqual([]);
  });

  it(
    'start the desktop-client config outside any project, with our package from the registry, speaking MCP',
    async () => {
      const config = JSON.parse(readFileSync(join(SNIPPETS, 'claude_desktop_config.json'), 'utf8')) as {
        mcpServers: Record<string, { command: string; args: string[] }>;
      };
      const entry = config.mcpServers.interlock!;
      expect(entry.args.slice(0, 4)).toEqual(['-y', '-p', 'mcp-interlock', 'interlock']);
      // The one line a desktop client holds, with this test's project file for the user's.
      const args = entry.args.map((arg) =>
        arg.endsWith('interlock.config.yaml') ? join(project, arg.split('/').at(-1)!) : arg,
      );
      const transport = new StdioClientTransport({
        command: entry.command,
        args,
        cwd: outside,
        env: env as Record<string, string>,
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString()).slice(-8_000);
      });
      const client = new Client({ name: 'desktop', version: '1.0.0' });
      try {
        await client.connect(transport, { timeout: STEP_TIMEOUT_MS });
        const tools = (await client.listTools()).tools.map((t) => t.name);
        expect(tools).toEqual(['mcp__notes__read_note']);
        const read = await client.callTool({
          name: 'mcp__notes__read_note',
          arguments: { id: 'drafts/welcome' },
        });
        expect(JSON.stringify(read.content)).toContain('Welcome to the notes server.');
      } catch (error) {
        throw new Error(`${String(error)}\nthe gateway's stderr:\n${stderr}`);
      } finally {
        await client.close();
      }
      expect(registry.asked).toContain('mcp-interlock');
      expect(registry.asked).not.toContain('interlock');
    },
    STEP_TIMEOUT_MS + 30_000,
  );

  it(
    "was needed: the old line, npx interlock, asks the registry for the unrelated 'interlock' package",
    async () => {
      const before = registry.asked.length;
      const old = await sh('npx interlock --version', outside);
      expect(registry.asked.slice(before)).toContain('interlock');
      // Here the registry has no such package; the public one has a stranger's, which npx would install and run.
      expect(old.code, show(old)).not.toBe(0);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "run the gateway guide's Inspector commands over stdio and over HTTP",
    async () => {
      const before = registry.asked.length;
      const lines = commands(join(SNIPPETS, 'inspector.sh'));
      expect(lines).toHaveLength(3);
      const [overStdio, startHttp, overHttp] = lines as [string, string, string];

      const listed = await sh(overStdio, project);
      expect(listed.code, show(listed)).toBe(0);
      const tools = (JSON.parse(listed.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name);
      expect(tools).toEqual(['mcp__notes__read_note']);

      // The guide's port is 8080; here the system picks one, and the call goes to it.
      expect(startHttp).toMatch(/ --port 8080 &$/);
      const gateway: ChildProcess = spawn(
        '/bin/sh',
        ['-c', startHttp.replace(/ --port 8080 &$/, ' --port 0')],
        {
          cwd: project,
          env,
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      try {
        let output = '';
        const url = await new Promise<string>((resolve, reject) => {
          const seen = (chunk: Buffer) => {
            output += chunk.toString();
            const match = /listening on (http:\/\/\S+)/.exec(output);
            if (match?.[1] !== undefined) resolve(match[1]);
          };
          gateway.stdout?.on('data', seen);
          gateway.stderr?.on('data', seen);
          gateway.once('exit', (code) => reject(new Error(`the gateway exited (${code}):\n${output}`)));
        });
        expect(overHttp).toContain('http://127.0.0.1:8080/mcp');
        const called = await sh(overHttp.replace('http://127.0.0.1:8080/mcp', url), project);
        expect(called.code, show(called)).toBe(0);
        expect(called.stdout).toContain('Welcome to the notes server.');
      } finally {
        // npx, sh and the gateway: the whole process group.
        if (gateway.pid !== undefined && gateway.exitCode === null) {
          const exited = new Promise((done) => gateway.once('close', done));
          process.kill(-gateway.pid, 'SIGTERM');
          await exited;
        }
      }
      expect(registry.asked.slice(before)).toContain('@modelcontextprotocol/inspector-cli');
      expect(registry.asked.slice(before)).not.toContain('interlock');
    },
    3 * STEP_TIMEOUT_MS,
  );
});
