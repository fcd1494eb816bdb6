/**
 * The newcomer path (issue 18), run on the packed tarball as a new user runs it: `npm pack` once, install the
 * tarball by name into a fresh project (dependencies from the npm cache, the registry for anything missing),
 * the demo, a first call through the installed CLI and through the library, and a first policy: a denied call,
 * one policy entry, the same call allowed. Files come from docs/snippets/getting-started/own-project, and every
 * command run here is one docs/getting-started.md shows.
 */
import { execFile } from 'node:child_process';
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../cli/helpers.js';
import { ensureBuilt } from '../helpers/build.js';

const SNIPPETS = join(ROOT, 'docs/snippets/getting-started/own-project');
const GUIDE = readFileSync(join(ROOT, 'docs/getting-started.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
const TARBALL = `${pkg.name}-${pkg.version}.tgz`;
/** Installs, builds and server starts on a loaded 2-core machine; a limit against hangs, not a timing. */
const STEP_TIMEOUT_MS = 180_000;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a user's shell: without what `npm test` adds for its own package, which would point a
 * nested npm at this repository.
 */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) {
    if (/^npm_(package_|lifecycle_|config_(local_)?prefix$)/i.test(key) || key === 'INIT_CWD')
      delete env[key];
  }
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  return env;
}

/** Runs a command to its end; never throws for a non-zero exit. */
function run(command: string, args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd, env: userEnv(), timeout: STEP_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Shows a failed step's output in the assertion message. */
const show = (r: Run): string => `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;

/** Processes still running from `dir` (a server the CLI or the library started and did not stop). */
function leftovers(dir: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(dir)) out.push(`${pid}: ${cmd}`);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const versionOf = (name: string): string =>
  (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
    .version;

let work: string;
let packedFiles: string[] = [];
let project: string;
const npx = (...args: string[]) => run('npx', ['--no', ...args], project);
/** The guide's start line names the package (`npx -p mcp-interlock interlock`); `--no`: never a registry install. */
const OUR_CLI = ['-p', 'mcp-interlock', 'interlock'];

beforeAll(
  async () => {
    await ensureBuilt();
    work = mkdtempSync(join(tmpdir(), 'interlock-newcomer-'));
    project = join(work, 'my-agent');
    mkdirSync(project);
    // One pack per run; scripts are skipped because dist/ is fresh (a real `npm pack` builds through prepack).
    const packed = await run(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', project],
      ROOT,
    );
    if (packed.code !== 0) throw new Error(`npm pack failed: ${show(packed)}`);
    const manifest = JSON.parse(packed.stdout) as { files: { path: string }[] }[];
    packedFiles = manifest[0]?.files.map((f) => f.path) ?? [];
    const init = 'npm init -y && npm pkg set type=module';
    expect(GUIDE).toContain(init);
    for (const args of [
      ['init', '-y'],
      ['pkg', 'set', 'type=module'],
    ]) {
      const step = await run('npm', args, project);
      if (step.code !== 0) throw new Error(`npm ${args.join(' ')} failed: ${show(step)}`);
    }
    const flags = ['--prefer-offline', '--no-audit', '--no-fund'];
    const installed = await run('npm', ['install', ...flags, `./${TARBALL}`], project);
    if (installed.code !== 0) throw new Error(`npm install ./${TARBALL} failed: ${show(installed)}`);
    // What a TypeScript project adds; the versions this repository builds with, so the cache has them.
    const dev = [`typescript@${versionOf('typescript')}`, `@types/node@${versionOf('@types/node')}`];
    const tools = await run('npm', ['install', ...flags, '--save-dev', ...dev], project);
    if (tools.code !== 0) throw new Error(`npm install --save-dev failed: ${show(tools)}`);
  },
  2 * STEP_TIMEOUT_MS + 60_000,
);

// Removing a project with its node_modules takes long on a loaded machine: a limit against hangs, not a timing.
afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
}, STEP_TIMEOUT_MS);

describe('the newcomer path, on the packed tarball', () => {
  it('packs the build, the example servers, the policy templates and the JSON Schema, and nothing else', () => {
    const allowed =
      /^(dist\/|examples\/servers\/|policies\/templates\/|schema\/|package\.json$|README\.md$|SECURITY\.md$|LICENSE)/;
    expect(packedFiles).toContain('dist/cli/main.js');
    expect(packedFiles).toContain('examples/servers/notes-server.mjs');
    expect(packedFiles).toContain('policies/templates/assistant.yaml');
    expect(packedFiles.filter((f) => !allowed.test(f))).toEqual([]);
  });

  it('installs the tarball by name, with its dependencies and without its devDependencies', () => {
    expect(GUIDE).toContain(`npm install ./${TARBALL}`);
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(manifest.dependencies[pkg.name]).toBe(`file:${TARBALL}`);
    const installed = join(project, 'node_modules', pkg.name);
    expect(existsSync(join(project, 'node_modules/.bin/interlock'))).toBe(true);
    expect(existsSync(join(installed, 'dist/interop/index.d.ts'))).toBe(true);
    expect(existsSync(join(installed, 'schema/interlock.config.schema.json'))).toBe(true);
    // The bundled example servers must run on the package's own dependencies.
    expect(existsSync(join(project, 'node_modules/@modelcontextprotocol/sdk'))).toBe(false);
    expect(existsSync(join(project, 'node_modules/@modelcontextprotocol/server'))).toBe(true);
  });

  it(
    'runs the demo from the installed package (npx -p mcp-interlock interlock demo)',
    async () => {
      expect(GUIDE).toContain('npx -p mcp-interlock interlock demo');
      const demo = await npx(...OUR_CLI, 'demo');
      expect(demo.code, show(demo)).toBe(0);
      expect(demo.stdout).toMatch(/notes\s+stdio.*tools: list_notes, read_note, write_note, delete_note/);
      expect(demo.stdout).toMatch(/weather\s+http.*tools: get_forecast, set_alert/);
      expect(demo.stdout).toContain("allowed by rule 'notes-list'");
      expect(demo.stdout).toContain('Audit trail');
      expect(leftovers(project)).toEqual([]);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'makes a first call from the CLI: denied without a policy, allowed once the policy names the tool',
    async () => {
      copyFileSync(join(SNIPPETS, 'interlock.config.yaml'), join(project, 'interlock.config.yaml'));
      const call = [...OUR_CLI, 'call', 'mcp__notes__read_note', '--args', '{"id":"drafts/welcome"}'];
      expect(GUIDE).toContain(`npx ${call.slice(0, 5).join(' ')} --args '${call[6]}'`);

      const servers = await npx(...OUR_CLI, 'servers');
      expect(servers.code, show(servers)).toBe(0);
      expect(servers.stdout).toMatch(/notes\s+stdio\s+\S+\s+ready\s+4\b/);

      const denied = await npx(...call);
      expect(denied.code, show(denied)).toBe(3);
      expect(denied.stdout).not.toContain('Welcome to the notes server.');
      expect(denied.stderr).toContain('mcp:notes:read_note');

      appendFileSync(
        join(project, 'interlock.config.yaml'),
        `\n${readFileSync(join(SNIPPETS, 'policy.yaml'), 'utf8')}`,
      );
      const allowed = await npx(...call);
      expect(allowed.code, show(allowed)).toBe(0);
      expect(allowed.stdout).toContain('Welcome to the notes server.');

      // The policy allows that one tool: the one next to it is still denied.
      const other = await npx(...OUR_CLI, 'call', 'mcp__notes__delete_note', '--args', '{"id":"x"}');
      expect(other.code, show(other)).toBe(3);
      expect(leftovers(project)).toEqual([]);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'makes a first call from the library: type-checked against the installed types, denied, granted, allowed',
    async () => {
      for (const file of ['first-call.ts', 'tsconfig.json']) {
        copyFileSync(join(SNIPPETS, file), join(project, file));
      }
      expect(GUIDE).toContain('npx tsc && node first-call.js');
      const compiled = await npx('tsc');
      expect(compiled.code, show(compiled)).toBe(0);

      const first = await run(process.execPath, ['first-call.js'], project);
      expect(first.code, show(first)).toBe(0);
      expect(first.stdout.trim().split('\n')).toEqual([
        'denied: CAPABILITY_DENIED mcp:notes:read_note execute',
        'Welcome to the notes server.',
      ]);
      expect(leftovers(project)).toEqual([]);
    },
    STEP_TIMEOUT_MS,
  );
});
