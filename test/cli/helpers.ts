// Running the `interlock` CLI as a real process (`node --import tsx src/cli/main.ts ...`) in a temp project.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { fixture, readFixtureLog } from '../helpers/fixtures.js';
import { descendantPids, waitForExit } from '../helpers/processes.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = join(ROOT, 'src/cli/main.ts');
/** tsx's loader by absolute URL: the CLI runs in temp directories where `tsx` would not resolve. */
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

/** How a CLI run ended. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Pids of every process the CLI started that was seen while it ran. */
  descendants: number[];
  /** The same without tsx's esbuild service: the servers the CLI started. */
  servers: number[];
}

export interface CliOptions {
  cwd: string;
  /** Added to this process's environment (`undefined` removes a variable). */
  env?: Record<string, string | undefined>;
  /** Written to the CLI's stdin, then stdin is closed. */
  input?: string;
  timeoutMs?: number;
}

/** A running CLI process. */
export interface RunningCli {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once `pattern` shows up on stderr or stdout. */
  waitFor(pattern: RegExp): Promise<void>;
  readonly done: Promise<CliResult>;
}

/** Starts the CLI. Watches its descendants (every 100 ms) so a test can check they are gone at the end. */
export function startCli(args: readonly string[], options: CliOptions): RunningCli {
  const env: Record<string, string | undefined> = {
    ...process.env,
    NO_COLOR: undefined,
    FORCE_COLOR: undefined,
  };
  for (const [key, value] of Object.entries(options.env ?? {})) env[key] = value;
  const child = spawn(process.execPath, ['--import', TSX, CLI, ...args], {
    cwd: options.cwd,
    env: env as NodeJS.ProcessEnv,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      if (w.pattern.test(stdout) || w.pattern.test(stderr)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    check();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    check();
  });
  if (options.input !== undefined) child.stdin?.end(options.input);
  else child.stdin?.end();
  const seen = new Map<number, string>();
  const watch = setInterval(() => {
    if (child.pid === undefined) return;
    for (const pid of descendantPids(child.pid)) if (!seen.has(pid)) seen.set(pid, commandLine(pid));
  }, 100);
  const timeout = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  const done = new Promise<CliResult>((resolveDone) => {
    child.once('close', (code, signal) => {
      clearInterval(watch);
      clearTimeout(timeout);
      const servers = [...seen].filter(([, cmd]) => !cmd.includes('esbuild')).map(([pid]) => pid);
      resolveDone({ code, signal, stdout, stderr, descendants: [...seen.keys()], servers });
    });
  });
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    waitFor: (pattern) =>
      new Promise<void>((resolveWait, reject) => {
        waiters.push({ pattern, resolve: resolveWait });
        check();
        done.then(() =>
          reject(new Error(`the CLI exited before ${pattern} showed up.\n${stdout}\n${stderr}`)),
        );
      }),
    done,
  };
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

/** Runs the CLI to its end. */
export function runCli(args: readonly string[], options: CliOptions): Promise<CliResult> {
  return startCli(args, options).done;
}

/** Parses the CLI's stdout as the one JSON document `--json` promises. */
export function json<T = Record<string, unknown>>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`stdout is not one JSON document:\n${result.stdout}\nstderr:\n${result.stderr}`);
  }
}

/** A temp directory for one project file and what it references. */
export interface TempProject {
  readonly dir: string;
  /** Writes a file (objects as YAML for .yaml/.yml, JSON otherwise); returns its path. */
  write(name: string, content: string | object): string;
  /** A FIXTURE_LOG path in the project, for servers whose pids a test wants to check. */
  readonly log: string;
  /** Pids that fixture servers logged (every fixture logs its pid with each message). */
  fixturePids(): number[];
  close(): void;
}

export function tempProject(): TempProject {
  const dir = mkdtempSync(join(tmpdir(), 'interlock-cli-'));
  const log = join(dir, 'fixture-log.jsonl');
  return {
    dir,
    log,
    write(name, content) {
      const path = join(dir, name);
      mkdirSync(dirname(path), { recursive: true });
      const text =
        typeof content === 'string'
          ? content
          : /\.ya?ml$/.test(name)
            ? stringify(content)
            : `${JSON.stringify(content, null, 2)}\n`;
      writeFileSync(path, text);
      return path;
    },
    fixturePids: () => [...new Set(readFixtureLog(log).map((e) => e.pid))],
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Every pid in `pids` is gone (waiting up to 5 s each for stragglers to finish exiting). */
export async function allGone(pids: readonly number[]): Promise<number[]> {
  const alive: number[] = [];
  for (const pid of pids) if (!(await waitForExit(pid, 5_000))) alive.push(pid);
  return alive;
}

/** A value put into a server's env through `${CLI_TEST_SECRET}`: it must never be printed. */
export const SECRET = 's3cr3t-token-value-42';

/** The policy of the echo project: one rule of each kind. */
export const ECHO_POLICY = {
  version: 1,
  rules: [
    { id: 'echo-allowed', effect: 'allow', resource: 'mcp:echo:echo', actions: 'execute' },
    { id: 'env-allowed', effect: 'allow', resource: 'mcp:echo:get_env', actions: 'execute' },
    { id: 'fail-allowed', effect: 'allow', resource: 'mcp:echo:fail', actions: 'execute' },
    {
      id: 'add-small',
      effect: 'allow',
      resource: 'mcp:echo:add',
      actions: 'execute',
      when: { args: { a: { max: 10 } } },
    },
    { id: 'no-throw', effect: 'deny', resource: 'mcp:echo:throw', actions: '*', description: 'never throw' },
    { id: 'pid-ask', effect: 'ask', resource: 'mcp:echo:pid', actions: 'execute' },
    { id: 'remote-echo', effect: 'allow', resource: 'mcp:remote:echo', actions: 'execute' },
  ],
};

/**
 * Writes the echo project: `echo` (the echo fixture over stdio, spawned by the CLI, logging to the project's
 * FIXTURE_LOG, with the secret in its env) and `remote` (an echo fixture over Streamable HTTP at `httpUrl`).
 */
export function writeEchoProject(project: TempProject, httpUrl: string): void {
  project.write('interlock.config.yaml', {
    mcpServers: {
      echo: {
        command: process.execPath,
        args: [fixture('echo')],
        env: { FIXTURE_LOG: project.log, SECRET_TOKEN: '${CLI_TEST_SECRET}' },
      },
      remote: { type: 'http', url: httpUrl },
    },
    policy: ECHO_POLICY,
    audit: { file: 'logs/audit.jsonl' },
  });
}
