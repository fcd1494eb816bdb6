/**
 * Which of a tool call's objects outlive a scavenge (issue 15, seventh pass): the manager on its full production
 * path (a 1 000-rule `CapabilitySet`, audit to memory and to the OpenTelemetry API, a tracer) calls the bench's
 * `stdio-raw` echo server with calls in flight, after a warm-up, while V8's sampling heap profiler keeps only the
 * objects that a minor GC did not collect: those promoted to the old generation (or allocated there), which only a
 * full collection frees. Prints the bytes per call, and by the function that allocated them.
 *
 *   node --import tsx bench/promotion.ts [--calls 30000] [--warmup 5000] [--concurrency 16] [--top 12]
 *
 * The figure is bimodal from run to run: in some processes the SDK's long-lived tables stay in the young
 * generation and little is promoted; in most they do not. Run it a few times. Add `--no-turbo-inlining` to node's
 * flags to see allocations by the function that made them rather than the one they were inlined into.
 */
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { trace } from '@opentelemetry/api';
import type * as Interlock from '../src/interop/index.js';
import type * as Security from '../src/security/index.js';
import { ECHO_RAW, ROOT_DIR } from './lib/paths.js';
import { benchCapabilities } from './lib/policy.js';
import { ensureInterlockBuild, importBuild } from './lib/processes.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '30000' },
    warmup: { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '16' },
    top: { type: 'string', default: '12' },
  },
});
const int = (name: keyof typeof values, min: number): number => {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer >= ${min}`);
  return n;
};
const calls = int('calls', 1);
const warmup = int('warmup', 0);
const concurrency = int('concurrency', 1);
const top = int('top', 1);

// The modules build: the same code as the contender's, with each function in the file of its source.
const entry = ensureInterlockBuild({ modules: true });
const load = <T>(path: string) => importBuild<T>(entry, path);
const { MCPClientManager } = await load<typeof Interlock>('interop/index.js');
const security = await load<typeof Security>('security/index.js');

const SERVER = 'bench';
const manager = new MCPClientManager({
  capabilities: benchCapabilities(security.CapabilitySet, SERVER),
  audit: security.combineAuditSinks(new security.MemoryAuditSink(), new security.OpenTelemetryAuditSink()),
  tracer: trace.getTracer('bench'),
});
await manager.connectServer({
  name: SERVER,
  transport: 'stdio',
  command: process.execPath,
  args: [ECHO_RAW],
});
const tool = `mcp__${SERVER}__echo`;
const text = 'The quick brown fox jumps over the lazy dog';

async function run(total: number): Promise<void> {
  let issued = 0;
  const lane = async () => {
    while (issued < total) {
      issued++;
      const result = await manager.executeTool(tool, { text });
      if (result !== text) throw new Error(`the echo tool answered ${JSON.stringify(result)}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(total, 1)) }, lane));
}

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

await run(warmup);
const session = new Session();
session.connect();
await session.post('HeapProfiler.enable');
await session.post('HeapProfiler.startSampling', {
  samplingInterval: 512,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: false,
});
await run(calls);
const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: SamplingNode } };
session.disconnect();
await manager.close();

const byFunction = new Map<string, number>();
const visit = (node: SamplingNode) => {
  if (node.selfSize > 0) {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url.replace(`file://${ROOT_DIR}/`, '').replace(/^.*node_modules\//, '');
    const name = `${functionName || '(anonymous)'} ${where || '(native)'}:${lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize);
  }
  for (const child of node.children) visit(child);
};
visit(profile.head);
const total = [...byFunction.values()].reduce((a, b) => a + b, 0);
const lines = [
  `Objects of a tool call that outlive a scavenge, ${calls} calls with ${concurrency} in flight (Node ${process.version})`,
  '',
  `| Allocated by | bytes per call |`,
  `| --- | ---: |`,
  `| (all) | ${(total / calls).toFixed(0)} |`,
  ...[...byFunction]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, bytes]) => `| ${name} | ${(bytes / calls).toFixed(1)} |`),
  '',
];
process.stdout.write(lines.join('\n'));
process.exit(0);
