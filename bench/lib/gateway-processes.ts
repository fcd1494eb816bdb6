/**
 * The processes of the gateway benchmark (bench/gateway.ts, issue 41 part 4): the upstream echo server over
 * Streamable HTTP, and `interlock serve --http` (the built CLI in dist/, as deployed) on a project file whose one
 * server is that upstream, with the bench's 1 000-rule policy and audit to a file; in front of the upstream a bare
 * Node HTTP hop, the floor any Node gateway starts from, and a TCP relay that parses nothing, the floor of any
 * process. Each is its own process; its CPU time is read from /proc so that a block's cost per call can be charged
 * to the process that spent it.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CapabilitySet } from '../../src/security/index.js';
import { BARE_HOP, ECHO_SDK, ROOT_DIR, TCP_RELAY } from './paths.js';
import { benchCapabilities, POLICY_RULES } from './policy.js';
import { newest } from './processes.js';

/** A process of the bench, its endpoint, and how to stop it. */
export interface BenchProcess {
  child: ChildProcess;
  url: URL;
  /** User + system CPU time the process has used so far, in ms (from /proc; NaN where there is none). */
  cpuMs(): number;
  /** What it wrote to stderr (for the report when a run fails). */
  stderr(): string;
  /** Ends the process and resolves once it has exited (a gateway writes its CPU profile on the way out). */
  stop(): Promise<void>;
}

/** Set to another build's `cli/main.js` to bench that build's gateway (a candidate fix, or the one before it). */
const GATEWAY_CLI_ENV = 'BENCH_GATEWAY_CLI';

/** The built CLI, as `npm run build` writes it; rebuilt first when a source file is newer. */
export function ensureBuiltCli(log: (line: string) => void): string {
  const override = process.env[GATEWAY_CLI_ENV];
  if (override !== undefined && override !== '') {
    if (!existsSync(override)) throw new Error(`${GATEWAY_CLI_ENV}: no such file ${override}`);
    return resolve(override);
  }
  const main = join(ROOT_DIR, 'dist', 'cli', 'main.js');
  const script = join(ROOT_DIR, 'scripts', 'build.mjs');
  const sources = Math.max(newest(join(ROOT_DIR, 'src'), '.ts'), statSync(script).mtimeMs);
  if (existsSync(main) && statSync(main).mtimeMs >= sources) return main;
  log('building dist/ (npm run build), a source file is newer than dist/cli/main.js...');
  const run = spawnSync(process.execPath, [script], { cwd: ROOT_DIR, encoding: 'utf8' });
  if (run.status !== 0 || !existsSync(main)) {
    throw new Error(`npm run build failed (exit ${run.status}):\n${run.stdout}${run.stderr}`);
  }
  return main;
}

function cpuOf(pid: number | undefined): () => number {
  return () => {
    if (pid === undefined) return Number.NaN;
    try {
      // Fields 14 and 15 of /proc/PID/stat (after the parenthesised command name): utime and stime, in ticks.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    } catch {
      return Number.NaN;
    }
  };
}

/** Every process started here, ended when the bench's process exits however it does (an exception, EPIPE). */
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function collect(child: ChildProcess): () => string {
  children.add(child);
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    err = (err + chunk.toString()).slice(-8192);
  });
  return () => err;
}

function started(child: ChildProcess, pattern: RegExp, what: string, err: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) =>
      reject(new Error(`${what} exited (${code}) before listening:\n${out}${err()}`)),
    );
  });
}

function stopper(child: ChildProcess, how: () => void): () => Promise<void> {
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    how();
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
}

/** The bench's echo server (the SDK's McpServer, stateful, JSON answers) on Streamable HTTP. */
export async function startUpstream(): Promise<BenchProcess> {
  const child = spawn(process.execPath, [ECHO_SDK, '--transport', 'http', '--port', '0'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const stderr = collect(child);
  const port = await started(child, /LISTENING (\d+)/, 'the echo server', stderr);
  return {
    child,
    stderr,
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    cpuMs: cpuOf(child.pid),
    stop: stopper(child, () => child.stdin?.end()),
  };
}

/** The bare hop (bench/servers/bare-hop.mjs) in front of `upstream`: one more Node process, no MCP work. */
export function startBareHop(upstream: URL): Promise<BenchProcess> {
  return startInFront(BARE_HOP, upstream, 'the bare hop');
}

/** The TCP relay (bench/servers/tcp-relay.mjs) in front of `upstream`: one more process that parses nothing. */
export function startTcpRelay(upstream: URL): Promise<BenchProcess> {
  return startInFront(TCP_RELAY, upstream, 'the TCP relay');
}

async function startInFront(script: string, upstream: URL, what: string): Promise<BenchProcess> {
  const child = spawn(process.execPath, [script, upstream.href], { stdio: ['pipe', 'pipe', 'pipe'] });
  const stderr = collect(child);
  const port = await started(child, /LISTENING (\d+)/, what, stderr);
  return {
    child,
    stderr,
    url: new URL(`http://127.0.0.1:${port}${upstream.pathname}`),
    cpuMs: cpuOf(child.pid),
    stop: stopper(child, () => child.stdin?.end()),
  };
}

/** A temporary project: the upstream as server `echo`, the 1 000-rule policy, audit to a JSON-lines file. */
export function benchProject(upstream: URL): { dir: string; file: string; close(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'interlock-gateway-bench-'));
  const policy = benchCapabilities(CapabilitySet, 'echo').toJSON();
  if (policy.rules.length !== POLICY_RULES) throw new Error('the bench policy lost rules');
  const file = join(dir, 'interlock.config.json');
  writeFileSync(
    file,
    JSON.stringify({
      mcpServers: { echo: { type: 'http', url: upstream.href } },
      policy,
      audit: { file: 'audit.jsonl' },
    }),
  );
  return { dir, file, close: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `interlock serve --http --port 0` from dist/, optionally under `node --cpu-prof` (written at exit). */
export async function startGateway(
  cli: string,
  project: { dir: string; file: string },
  options: { cpuProfDir?: string | undefined } = {},
): Promise<BenchProcess> {
  const prof = options.cpuProfDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', options.cpuProfDir];
  const child = spawn(
    process.execPath,
    [...prof, cli, '--config', project.file, 'serve', '--http', '--port', '0'],
    { cwd: project.dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  );
  const stderr = collect(child);
  const url = await started(child, /listening on (\S+)/, 'interlock serve', stderr);
  return {
    child,
    stderr,
    url: new URL(url),
    cpuMs: cpuOf(child.pid),
    // SIGTERM drains and exits normally, so that --cpu-prof writes its profile.
    stop: stopper(child, () => child.kill('SIGTERM')),
  };
}
