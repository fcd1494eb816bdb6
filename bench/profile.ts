/**
 * Profiles one contender's calls (issue 8: "where a target is missed, profile"): runs its `calls` job under
 * `node --cpu-prof` and prints where the time went: self time by function and by package or source file.
 *
 *   node --import tsx bench/profile.ts [--contender interlock] [--server stdio-raw] [--calls 20000]
 *                                      [--concurrency 16] [--top 25]
 *
 * Writes the profile to bench/.profiles/ (ignored by git; open it in Chrome DevTools for the full picture).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { BENCH_DIR, ROOT_DIR } from './lib/paths.js';
import { BUILD_OVERRIDE_ENV, ensureInterlockBuild, startHttpServer } from './lib/processes.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values } = parseArgs({
  options: {
    contender: { type: 'string', default: 'interlock' },
    server: { type: 'string', default: 'stdio-raw' },
    calls: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '16' },
    top: { type: 'string', default: '25' },
  },
});

const dir = join(BENCH_DIR, '.profiles', values.contender);
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const http = values.server === 'http' ? await startHttpServer() : undefined;
// Interlock's contender runs its modules build here (unless BENCH_INTERLOCK_BUILD names another), the same code as
// the linked one, so that a frame's file is the source file it came from and not a shared chunk.
const override = process.env[BUILD_OVERRIDE_ENV];
const build =
  override !== undefined && override !== '' ? override : dirname(ensureInterlockBuild({ modules: true }));
const run = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--cpu-prof',
    '--cpu-prof-dir',
    dir,
    join(BENCH_DIR, 'contenders', `${values.contender}.ts`),
    '--job',
    'calls',
    '--server',
    values.server,
    '--calls',
    values.calls,
    '--warmup',
    '1000',
    `--concurrency=${values.concurrency}`,
    ...(http === undefined ? [] : ['--url', http.url]),
  ],
  {
    cwd: ROOT_DIR,
    encoding: 'utf8',
    env: { ...process.env, [BUILD_OVERRIDE_ENV]: build },
    // Peers that leak abort listeners over HTTP warn once per request: past the default 1 MB of stderr, spawnSync
    // would kill the child before it writes its profile.
    maxBuffer: 256 * 1024 * 1024,
  },
);
await http?.close();
process.stdout.write(run.stdout.split('\n').find((l) => l.startsWith('{')) ?? run.stderr);
process.stdout.write('\n');

const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
if (file === undefined) throw new Error(`no profile written to ${dir}`);
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;

const self = new Map<number, number>();
profile.samples.forEach((id, i) => {
  self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const total = [...self.values()].reduce((a, b) => a + b, 0);

/** Interlock's build as the profile names its files (ESM resolves symbolic links). */
const buildUrl = `${pathToFileURL(realpathSync(build)).href}/`;

/** Where a frame's code lives: Interlock's build (as `src/…`), a package under node_modules, a file of ours, or Node. */
function owner(url: string): string {
  if (url === '') return '(native / idle / gc)';
  if (url.startsWith(buildUrl)) return `src/${url.slice(buildUrl.length)}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg !== null) return pkg[1]!;
  if (url.startsWith('node:')) return url;
  return url.replace(`file://${ROOT_DIR}/`, '');
}

const byFunction = new Map<string, number>();
const byOwner = new Map<string, number>();
for (const node of profile.nodes) {
  const t = self.get(node.id) ?? 0;
  if (t === 0) continue;
  const f = node.callFrame;
  const name = `${f.functionName || '(anonymous)'} ${owner(f.url)}:${f.lineNumber + 1}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + t);
  byOwner.set(owner(f.url), (byOwner.get(owner(f.url)) ?? 0) + t);
}
// Inclusive time of Interlock's own functions: what each costs with everything it calls. The contender runs the
// compiled package (bench/node_modules/.interlock-build-modules, or the BENCH_INTERLOCK_BUILD override), whose
// files `owner` names by their path in src/.
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const inclusive = new Map<string, number>();
for (const [id, t] of self) {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const f = byId.get(cur)!.callFrame;
    const where = owner(f.url);
    if (!where.startsWith('src/')) continue;
    const name = `${f.functionName || '(anonymous)'} ${where}`;
    if (seen.has(name)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + t);
  }
}
const top = Number(values.top);
const show = (title: string, map: Map<string, number>) => {
  process.stdout.write(`\n${title}\n`);
  for (const [name, t] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(
      `${((100 * t) / total).toFixed(1).padStart(5)}%  ${(t / 1000).toFixed(0).padStart(6)} ms  ${name}\n`,
    );
  }
};
show('Self time by package or file', byOwner);
show('Self time by function', byFunction);
show("Inclusive time of Interlock's functions", inclusive);
process.stdout.write(`\nprofile: ${join(dir, file)}\n`);
