/**
 * What Interlock's own work costs per tool call, with the protocol taken out (issue 15): the manager connects to
 * the bench's echo server as usual, then its MCP client's `callTool` is replaced by one that answers at once with
 * the result the server would send. What is left is the pipeline: the span, argument validation, the gate among
 * the rules, the audit records, the call slot, statistics, events and normalization. Without pipes, a server
 * process or the SDK's protocol work, the figure is steadier than the `calls` figures of `npm run bench`, so it
 * can show a change of a fraction of a µs.
 *
 *   node --import tsx bench/pipeline-cost.ts [--calls 200000] [--rounds 5]
 *
 * Runs on the compiled package (bench/node_modules/.interlock-build-modules, the same code as the `interlock`
 * contender's, unlinked). Prints CPU µs per call, the median over rounds, for each setup, sequentially and with 16
 * calls in flight, and the bytes a call allocates (V8's sampling heap profiler, counting objects the GC has already
 * collected, over one more run with 16 in flight).
 */
import { parseArgs } from 'node:util';
import { trace } from '@opentelemetry/api';
import type * as Interlock from '../src/interop/index.js';
import type * as Client from '../src/protocol/client.js';
import type * as Security from '../src/security/index.js';
import { ECHO_RAW } from './lib/paths.js';
import { measurePerCall, perCallRow } from './lib/per-call.js';
import { benchCapabilities } from './lib/policy.js';
import { ensureInterlockBuild, importBuild } from './lib/processes.js';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '5' } },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);

// The modules build: InterlockClient is internal, and only there a file of its own.
const entry = ensureInterlockBuild({ modules: true });
const load = <T>(path: string) => importBuild<T>(entry, path);
const { MCPClientManager } = await load<typeof Interlock>('interop/index.js');
const security = await load<typeof Security>('security/index.js');
const { InterlockClient } = await load<typeof Client>('protocol/client.js');

// Every client of this process answers `tools/call` at once, as the echo server would.
let answered = 0;
InterlockClient.prototype.callTool = function callTool(params: { arguments?: { text?: string } }) {
  answered++;
  return Promise.resolve({ content: [{ type: 'text', text: params.arguments?.text ?? '' }] });
} as never;

interface Setup {
  name: string;
  options(): Interlock.MCPClientManagerOptions;
}

const SERVER = 'bench';
const setups: Setup[] = [
  {
    name: 'one grant, no audit, no tracer',
    options: () => {
      const capabilities = new security.CapabilitySet();
      capabilities.grant(`mcp:${SERVER}:echo`, 'execute');
      return { capabilities };
    },
  },
  {
    // Issue 42: labels resolved on every call (none on this tool), and a rule that reads the flow state.
    name: 'one grant, labels resolved, a flow rule',
    options: () => {
      const capabilities = new security.CapabilitySet();
      capabilities.grant(`mcp:${SERVER}:echo`, 'execute', { when: (i) => !(i.flow?.has('secret') ?? false) });
      const none = { content: [], sink: ['egress'] };
      return { capabilities, flowLabels: { labelsFor: () => none } };
    },
  },
  {
    // Issue 42: every result recorded with content labels, and argument provenance checked on every call.
    name: 'one grant, results recorded, a provenance rule',
    options: () => {
      const capabilities = new security.CapabilitySet();
      capabilities.grant(`mcp:${SERVER}:echo`, 'execute', {
        when: (i) => i.flow === undefined || i.flow.carried(i.args, ['secret']).carried.length === 0,
      });
      const labelled = { content: ['private', 'untrusted'], sink: [] };
      return { capabilities, flowLabels: { labelsFor: () => labelled } };
    },
  },
  {
    name: '1 000 rules, audit to memory and OpenTelemetry, tracer (the contender)',
    options: () => ({
      capabilities: benchCapabilities(security.CapabilitySet, SERVER),
      audit: security.combineAuditSinks(
        new security.MemoryAuditSink(),
        new security.OpenTelemetryAuditSink(),
      ),
      tracer: trace.getTracer('bench'),
    }),
  },
];

const rows: string[] = [];
for (const setup of setups) {
  const manager = new MCPClientManager(setup.options());
  await manager.connectServer({
    name: SERVER,
    transport: 'stdio',
    command: process.execPath,
    args: [ECHO_RAW],
  });
  const call = () => manager.executeTool(`mcp__${SERVER}__echo`, { text: 'hello' });
  const before = answered;
  const cost = await measurePerCall(call, { calls, rounds });
  await manager.close();
  // Else the manager's client is another copy of the class, and the figure would include the whole protocol.
  if (answered === before) throw new Error('the calls did not reach the patched InterlockClient.callTool');
  rows.push(perCallRow(setup.name, cost));
}

process.stdout.write(
  [
    `Interlock's own work per tool call (CPU: median of ${rounds} rounds of ${calls} calls; Node ${process.version})`,
    '',
    '| Setup | CPU µs, sequential | CPU µs, 16 in flight | bytes allocated per call |',
    '| --- | ---: | ---: | ---: |',
    ...rows,
    '',
  ].join('\n'),
);
