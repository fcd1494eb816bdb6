/**
 * What the gateway adds per call, measured as it is deployed (issue 41 part 4): an SDK client
 * (`@modelcontextprotocol/client`) in this process; the bench's echo server (bench/servers/echo-sdk.mjs) over
 * Streamable HTTP as its own process; `interlock serve --http` (the built CLI, dist/cli/main.js) as its own
 * process, on a project file whose one server is that same upstream over the same transport, with the bench's
 * 1 000-rule policy and audit to a JSON-lines file. Three paths, measured in blocks that take turns within each
 * round (the order rotates every round), so a spell of load from elsewhere falls on all of them alike:
 *
 *   direct      client → echo server
 *   relay       client → TCP relay (bench/servers/tcp-relay.mjs) → echo server: one more process, no parsing at all
 *   hop         client → bare Node HTTP hop (bench/servers/bare-hop.mjs) → echo server: the floor of a Node gateway
 *   gateway     client → interlock serve → echo server
 *   gateway×2   the same through two gateway processes, the client spreading its calls over both
 *
 * Figures: sequential p50/p99, throughput at concurrency 16 and 64, and the CPU each process spent per call.
 *
 *   node --import tsx bench/gateway.ts [--rounds 5] [--calls 1000] [--warmup 2000] [--cpu-prof DIR]
 *   npm run bench -- --figures gateway       (the same, from the harness)
 *
 * --cpu-prof runs the (first) gateway under `node --cpu-prof` and prints its top self times at the end.
 * Prints a table and writes bench/results/gateway.json.
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  type BenchProcess,
  benchProject,
  ensureBuiltCli,
  startBareHop,
  startGateway,
  startTcpRelay,
  startUpstream,
} from './lib/gateway-processes.js';
import { summarizeProfile } from './lib/gateway-profile.js';
import { BENCH_DIR } from './lib/paths.js';
import { POLICY_RULES } from './lib/policy.js';
import { median, quantile, round } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    calls: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '2000' },
    'cpu-prof': { type: 'string' },
    quiet: { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(values.rounds);
const CALLS = Number(values.calls);
const WARMUP = Number(values.warmup);
const LEVELS = [16, 64] as const;
const log = (line: string) => {
  if (!values.quiet) process.stderr.write(`${line}\n`);
};

type PathId = 'direct' | 'relay' | 'hop' | 'gateway' | 'gateway×2';
type FigureId = 'seq' | `c${(typeof LEVELS)[number]}`;
const PATHS: readonly PathId[] = ['direct', 'relay', 'hop', 'gateway', 'gateway×2'];
const FIGURES: readonly FigureId[] = ['seq', ...LEVELS.map((c) => `c${c}` as const)];

interface Path {
  id: PathId;
  clients: Client[];
  /** The echo tool's name on this path (the gateway lists it under its server's name). */
  tool: string;
  /** The processes that serve this path's calls, besides the client: CPU per call is charged to them. */
  gateways: BenchProcess[];
}

interface Block {
  path: PathId;
  figure: FigureId;
  round: number;
  times?: Float64Array;
  callsPerSecond: number;
  /** CPU per call, µs: this process (the client), the gateway processes, the upstream. */
  cpuUs: { client: number; gateways: number; upstream: number };
}

async function connect(url: URL): Promise<Client> {
  const client = new Client({ name: 'gateway-bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}

async function echoTool(client: Client): Promise<string> {
  const tools = (await client.listTools()).tools;
  const tool = tools.find((t) => t.name === 'echo') ?? tools.find((t) => t.name.endsWith('echo'));
  if (tool === undefined) throw new Error(`no echo tool in ${tools.map((t) => t.name).join(', ')}`);
  return tool.name;
}

async function run(path: Path, calls: number, concurrency: number, times?: Float64Array): Promise<number> {
  const { clients } = path;
  const args = { name: path.tool, arguments: { text: 'ping' } };
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < calls; i = next++) {
        const client = clients[i % clients.length]!;
        const start = times === undefined ? 0 : performance.now();
        const result = await client.callTool(args);
        if (result.isError) throw new Error(`the echo call failed: ${JSON.stringify(result.content)}`);
        if (times !== undefined) times[i] = performance.now() - start;
      }
    }),
  );
  return calls / ((performance.now() - t0) / 1000);
}

async function block(path: Path, upstream: BenchProcess, figure: FigureId, r: number): Promise<Block> {
  const concurrency = figure === 'seq' ? 1 : Number(figure.slice(1));
  const calls = figure === 'seq' ? CALLS : CALLS * 2;
  const times = figure === 'seq' ? new Float64Array(calls) : undefined;
  const cpu0 = process.cpuUsage();
  const gw0 = path.gateways.reduce((sum, g) => sum + g.cpuMs(), 0);
  const up0 = upstream.cpuMs();
  const callsPerSecond = await run(path, calls, concurrency, times);
  const cpu = process.cpuUsage(cpu0);
  const perCall = (ms: number) => round((ms * 1000) / calls, 1);
  return {
    path: path.id,
    figure,
    round: r,
    ...(times === undefined ? {} : { times }),
    callsPerSecond,
    cpuUs: {
      client: perCall((cpu.user + cpu.system) / 1000),
      gateways: perCall(path.gateways.reduce((sum, g) => sum + g.cpuMs(), 0) - gw0),
      upstream: perCall(upstream.cpuMs() - up0),
    },
  };
}

const cli = ensureBuiltCli(log);
const profDir = values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']);
const upstream = await startUpstream();
const project = benchProject(upstream.url);
const gateways: BenchProcess[] = [];
const paths: Path[] = [];
const blocks: Block[] = [];
const load = { start: loadavg(), end: [] as number[] };
try {
  gateways.push(await startGateway(cli, project, { cpuProfDir: profDir }));
  gateways.push(await startGateway(cli, project));
  gateways.push(await startBareHop(upstream.url));
  gateways.push(await startTcpRelay(upstream.url));
  const direct = await connect(upstream.url);
  const hop = await connect(gateways[2]!.url);
  const relay = await connect(gateways[3]!.url);
  const first = await connect(gateways[0]!.url);
  const second = await connect(gateways[1]!.url);
  const tool = await echoTool(first);
  if ((await echoTool(second)) !== tool) throw new Error('the two gateways list the echo tool differently');
  paths.push(
    { id: 'direct', clients: [direct], tool: await echoTool(direct), gateways: [] },
    { id: 'relay', clients: [relay], tool: await echoTool(relay), gateways: [gateways[3]!] },
    { id: 'hop', clients: [hop], tool: await echoTool(hop), gateways: [gateways[2]!] },
    { id: 'gateway', clients: [first], tool, gateways: [gateways[0]!] },
    { id: 'gateway×2', clients: [first, second], tool, gateways: gateways.slice(0, 2) },
  );
  log(`warm-up: ${WARMUP} calls per path, half sequential, half at concurrency 64`);
  for (const path of paths) {
    await run(path, WARMUP / 2, 1);
    await run(path, WARMUP / 2, 64);
  }
  for (let r = 0; r < ROUNDS; r++) {
    const order = PATHS.map((_, i) => paths[(i + r) % paths.length]!);
    for (const figure of FIGURES) {
      for (const path of order) {
        const b = await block(path, upstream, figure, r);
        blocks.push(b);
        log(
          `round ${r + 1}/${ROUNDS} ${figure.padEnd(3)} ${path.id.padEnd(9)} ${Math.round(b.callsPerSecond)} calls/s` +
            `${b.times === undefined ? '' : `, p50 ${quantile([...b.times], 0.5).toFixed(3)} ms`}` +
            `; cpu/call µs: client ${b.cpuUs.client}, gateway ${b.cpuUs.gateways}, upstream ${b.cpuUs.upstream}`,
        );
      }
    }
  }
  load.end = loadavg();
  for (const client of new Set(paths.flatMap((p) => p.clients))) await client.close();
} catch (err) {
  for (const [i, g] of gateways.entries()) process.stderr.write(`gateway ${i + 1} stderr:\n${g.stderr()}\n`);
  process.stderr.write(`upstream stderr:\n${upstream.stderr()}\n`);
  throw err;
} finally {
  for (const g of gateways) await g.stop();
  await upstream.stop();
  project.close();
}

interface PathSummary {
  p50Ms: number;
  p99Ms: number;
  callsPerSecond: Record<string, number>;
  cpuUsPerCall: Record<FigureId, { client: number; gateways: number; upstream: number }>;
}
const of = (path: PathId, figure: FigureId) => blocks.filter((b) => b.path === path && b.figure === figure);
const summary = Object.fromEntries(
  PATHS.map((id): [PathId, PathSummary] => {
    const seq = of(id, 'seq');
    // p50 and p99 of each round's block, then the median over rounds (a round is one side-by-side sample).
    const per = (p: number) => median(seq.map((b) => quantile([...b.times!], p)));
    const cpu = (figure: FigureId) => {
      const bs = of(id, figure);
      const m = (k: 'client' | 'gateways' | 'upstream') => round(median(bs.map((b) => b.cpuUs[k])), 1);
      return { client: m('client'), gateways: m('gateways'), upstream: m('upstream') };
    };
    return [
      id,
      {
        p50Ms: round(per(0.5), 3),
        p99Ms: round(per(0.99), 3),
        callsPerSecond: Object.fromEntries(
          LEVELS.map((c) => [`c${c}`, Math.round(median(of(id, `c${c}`).map((b) => b.callsPerSecond)))]),
        ),
        cpuUsPerCall: Object.fromEntries(FIGURES.map((f) => [f, cpu(f)])) as PathSummary['cpuUsPerCall'],
      },
    ];
  }),
) as Record<PathId, PathSummary>;
const d = summary.direct;
const comparisons = Object.fromEntries(
  (['relay', 'hop', 'gateway', 'gateway×2'] as const).map((id) => [
    id,
    {
      addedP50Ms: round(summary[id].p50Ms - d.p50Ms, 3),
      throughputRatio: Object.fromEntries(
        LEVELS.map((c) => [
          `c${c}`,
          round(summary[id].callsPerSecond[`c${c}`]! / d.callsPerSecond[`c${c}`]!, 2),
        ]),
      ),
    },
  ]),
);

console.log(
  `echo over Streamable HTTP; ${ROUNDS} rounds; per round and path ${CALLS} sequential calls and ${CALLS * 2} at each concurrency (medians over rounds)`,
);
console.log(
  '| Path | p50 (ms) | p99 (ms) | calls/s c16 | calls/s c64 | CPU µs/call of the relay, hop or gateways (seq, c64) |',
);
console.log('| --- | --- | --- | --- | --- | --- |');
for (const id of PATHS) {
  const s = summary[id];
  console.log(
    `| ${id} | ${s.p50Ms} | ${s.p99Ms} | ${s.callsPerSecond.c16} | ${s.callsPerSecond.c64} | ${id === 'direct' ? '-' : `${s.cpuUsPerCall.seq.gateways}, ${s.cpuUsPerCall.c64.gateways}`} |`,
  );
}
for (const [id, c] of Object.entries(comparisons)) {
  console.log(
    `${id}: +${c.addedP50Ms} ms at p50; ${Object.entries(c.throughputRatio)
      .map(([k, v]) => `${Math.round(v * 100)}% of direct throughput at ${k}`)
      .join(', ')}`,
  );
}
console.log(
  `load average ${load.start.map((l) => l.toFixed(2)).join(' ')} at the start, ${load.end.map((l) => l.toFixed(2)).join(' ')} at the end`,
);
const profile = profDir === undefined ? undefined : summarizeProfile(profDir, 25);
if (profile !== undefined) console.log(profile.text);

const out = join(BENCH_DIR, 'results', 'gateway.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify(
    {
      measuredAt: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
      loadavg: load,
      setup: {
        client:
          '@modelcontextprotocol/client, default protocol version (2025-era), one client per gateway process',
        upstream: 'bench/servers/echo-sdk.mjs --transport http (stateful, JSON answers)',
        gateway: `node dist/cli/main.js serve --http; policy of ${POLICY_RULES} rules; audit to a JSON-lines file`,
        twoReplicas: 'two gateway processes; the client alternates its calls between them (no proxy)',
        relay:
          'bench/servers/tcp-relay.mjs: node:net, bytes piped both ways, nothing parsed (the floor of any process)',
        hop: 'bench/servers/bare-hop.mjs: node:http in, undici request() out, no MCP work (the floor of a Node gateway)',
      },
      rounds: ROUNDS,
      sequentialCalls: CALLS,
      concurrentCalls: CALLS * 2,
      warmup: WARMUP,
      summary,
      comparisons,
      ...(profile === undefined ? {} : { profileTop: profile.top }),
    },
    null,
    2,
  )}\n`,
);
log(`wrote ${out}`);
