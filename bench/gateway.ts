/**
 * What the gateway adds per call (issue 17): an MCP client calling the bench's echo server, once over HTTP
 * straight to the server and once through `Gateway` (HTTP in, the gate with a 1 000-rule policy and audit to
 * memory, stdio out to the same kind of server). Sequential p50/p99 and throughput at concurrency 64, in one
 * process, interleaved over rounds so both rows see the same machine load.
 *
 *   node --import tsx bench/gateway.ts [--calls 2000] [--rounds 3]
 *
 * Prints a table and writes bench/results/gateway.json.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Gateway } from '../src/gateway/index.js';
import { MCPClientManager } from '../src/interop/index.js';
import { CapabilitySet, MemoryAuditSink } from '../src/security/index.js';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '3' } },
});
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);
const CONCURRENCY = 64;
const here = dirname(fileURLToPath(import.meta.url));
const ECHO = join(here, 'servers', 'echo-sdk.mjs');

interface Row {
  p50Ms: number;
  p99Ms: number;
  callsPerSecond: number;
}

async function startHttpEcho(): Promise<{ child: ChildProcess; url: URL }> {
  const child = spawn(process.execPath, [ECHO, '--transport', 'http', '--port', '0'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /LISTENING (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', () => reject(new Error('echo server exited')));
  });
  return { child, url: new URL(`http://127.0.0.1:${port}/mcp`) };
}

async function measure(url: URL): Promise<Row> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url));
  const call = (name: string) => client.callTool({ name, arguments: { text: 'ping' } });
  const tool = (await client.listTools()).tools.find((t) => t.name.endsWith('echo'))?.name ?? 'echo';
  for (let i = 0; i < 200; i++) await call(tool);
  const times = new Float64Array(CALLS);
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now();
    await call(tool);
    times[i] = performance.now() - t0;
  }
  times.sort();
  const at = (p: number) => Math.round(times[Math.min(CALLS - 1, Math.floor(p * CALLS))]! * 1000) / 1000;
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < CALLS) await call(tool);
    }),
  );
  const callsPerSecond = Math.round(CALLS / ((performance.now() - t0) / 1000));
  await client.close();
  return { p50Ms: at(0.5), p99Ms: at(0.99), callsPerSecond };
}

function policy(): CapabilitySet {
  const set = new CapabilitySet();
  for (let i = 0; i < 50; i++) for (let j = 0; j < 20; j++) set.grant(`mcp:srv${i}:tool${j}`, 'execute');
  set.grant('mcp:echo:echo', 'execute');
  return set;
}

const direct = await startHttpEcho();
const manager = new MCPClientManager({ capabilities: policy(), audit: new MemoryAuditSink() });
await manager.connectServer({ name: 'echo', transport: 'stdio', command: process.execPath, args: [ECHO] });
const gateway = new Gateway({ manager, audit: new MemoryAuditSink(), config: { http: { port: 0 } } });
const { url: gatewayUrl } = await gateway.listen();
const rows: Record<'direct' | 'gateway', Row[]> = { direct: [], gateway: [] };
try {
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['direct', 'gateway'] as const) : (['gateway', 'direct'] as const);
    for (const which of order) rows[which].push(await measure(which === 'direct' ? direct.url : gatewayUrl));
  }
} finally {
  await gateway.close();
  await manager.close();
  direct.child.stdin?.end();
  direct.child.kill();
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const summary = Object.fromEntries(
  (['direct', 'gateway'] as const).map((k) => [
    k,
    {
      p50Ms: median(rows[k].map((r) => r.p50Ms)),
      p99Ms: median(rows[k].map((r) => r.p99Ms)),
      callsPerSecondAt64: median(rows[k].map((r) => r.callsPerSecond)),
    },
  ]),
) as Record<'direct' | 'gateway', { p50Ms: number; p99Ms: number; callsPerSecondAt64: number }>;
const addedP50Ms = Math.round((summary.gateway.p50Ms - summary.direct.p50Ms) * 1000) / 1000;
console.log(`echo over HTTP, ${CALLS} calls per round, ${ROUNDS} rounds (medians)`);
for (const [name, r] of Object.entries(summary)) {
  console.log(
    `  ${name.padEnd(8)} p50 ${r.p50Ms} ms  p99 ${r.p99Ms} ms  ${r.callsPerSecondAt64} calls/s at concurrency ${CONCURRENCY}`,
  );
}
console.log(`  added by the gateway: p50 +${addedP50Ms} ms per call`);
const out = join(here, 'results', 'gateway.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify(
    {
      measuredAt: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      loadavg: loadavg(),
      calls: CALLS,
      rounds: ROUNDS,
      concurrency: CONCURRENCY,
      summary,
      addedP50Ms,
    },
    null,
    2,
  )}\n`,
);
