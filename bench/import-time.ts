/**
 * Import time (issue 15): how long `await import(entry)` takes in a fresh Node process, for the SDK client
 * (`@modelcontextprotocol/client`, the baseline) and Interlock's entry points, on the built `dist/`.
 *
 *   npm run build && node --import tsx bench/import-time.ts [--runs 21]
 *
 * Runs alternate between the entries (client, interop, root, client, …) so that a noisy neighbour slows them
 * alike, and each figure is the median of its runs. Also times `import` plus `new MCPClientManager()`, which
 * loads what the import leaves for later (the OpenTelemetry API). Prints a table and writes
 * bench/results/import-time.json.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg === -1 ? 21 : Number(process.argv[runsArg + 1]);

interface Entry {
  name: string;
  /** The module's specifier, as an app imports it (resolved from the repository root). */
  specifier: string;
  /** Extra code run after the import, timed with it. */
  after?: string;
}

const dist = (path: string) => pathToFileURL(join(root, 'dist', path)).href;
const ENTRIES: Entry[] = [
  { name: '@modelcontextprotocol/client', specifier: '@modelcontextprotocol/client' },
  { name: 'mcp-interlock/interop', specifier: dist('interop/index.js') },
  {
    name: 'mcp-interlock/interop + new MCPClientManager()',
    specifier: dist('interop/index.js'),
    after: 'await new m.MCPClientManager().close();',
  },
  { name: 'mcp-interlock/security', specifier: dist('security/index.js') },
  { name: 'mcp-interlock/tools', specifier: dist('tools/index.js') },
  { name: 'mcp-interlock (root)', specifier: dist('index.js') },
];

/**
 * One fresh process: milliseconds from before the import to after it (and `after`), on the wall clock and in
 * CPU time (user + system). CPU time moves less than wall time when other processes share the cores.
 */
function timeOnce(entry: Entry): { wall: number; cpu: number } {
  const code = [
    'const t = performance.now();',
    'const c = process.cpuUsage();',
    `const m = await import(${JSON.stringify(entry.specifier)});`,
    entry.after ?? '',
    'const u = process.cpuUsage(c);',
    'process.stdout.write(JSON.stringify({ wall: performance.now() - t, cpu: (u.user + u.system) / 1000 }));',
  ].join('\n');
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', code], {
    cwd: root,
    encoding: 'utf8',
  });
  return JSON.parse(out) as { wall: number; cpu: number };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

if (!existsSync(join(root, 'dist', 'interop', 'index.js'))) {
  console.error('dist/ is missing: run `npm run build` first.');
  process.exit(1);
}

const samples = new Map<string, { wall: number; cpu: number }[]>(ENTRIES.map((e) => [e.name, []]));
for (const entry of ENTRIES) timeOnce(entry); // warm the file system cache
for (let i = 0; i < RUNS; i++) {
  for (const entry of ENTRIES) samples.get(entry.name)?.push(timeOnce(entry));
}

const medians = (name: string) => {
  const runs = samples.get(name) ?? [];
  return { wall: median(runs.map((r) => r.wall)), cpu: median(runs.map((r) => r.cpu)) };
};
const baseline = medians(ENTRIES[0]?.name as string);
const rows = ENTRIES.map((entry) => {
  const { wall, cpu } = medians(entry.name);
  return {
    entry: entry.name,
    medianMs: Number(wall.toFixed(1)),
    ratio: Number((wall / baseline.wall).toFixed(2)),
    medianCpuMs: Number(cpu.toFixed(1)),
    cpuRatio: Number((cpu / baseline.cpu).toFixed(2)),
  };
});

console.log(`Import time, median of ${RUNS} fresh processes each (Node ${process.version})\n`);
console.log('| Entry | Wall (ms) | × SDK client | CPU (ms) | × SDK client |');
console.log('| --- | ---: | ---: | ---: | ---: |');
for (const r of rows) {
  console.log(
    `| \`${r.entry}\` | ${r.medianMs} | ${r.ratio.toFixed(2)}× | ${r.medianCpuMs} | ${r.cpuRatio.toFixed(2)}× |`,
  );
}

const file = join(root, 'bench', 'results', 'import-time.json');
mkdirSync(dirname(file), { recursive: true });
writeFileSync(
  file,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      loadavg: loadavg(),
      runs: RUNS,
      rows,
    },
    null,
    2,
  )}\n`,
);
