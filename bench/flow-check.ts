/**
 * Information flow cost (issue 42, "Argument provenance"): what a flow rule adds to a capability check, paid only when
 * one applies. Measures, on the compiled package:
 *
 * - a check of `send_email` under a policy with a `carries` deny, with a 1 KB argument, against a session holding
 *   100 KB and 1 MB of recorded labeled text (an argument that carries nothing: the whole search; and one that
 *   carries a fragment), beside the same check under a policy without flow rules;
 * - the cost of `record` per KB (documents of 10 KB, and one of 1 MB);
 * - the memory of the provenance index per MB recorded (its typed arrays, exactly).
 *
 *   node --import tsx bench/flow-check.ts
 *
 * Prints tables and writes bench/results/flow-check.json.
 */
import type * as Security from '../src/security/index.js';
import type { CapabilitySet, CheckContext, FlowState } from '../src/security/index.js';
import { ensureInterlockBuild, importBuild } from './lib/processes.js';
import { machineLine, seededRandom as random, writeScenarioResults } from './lib/scenario.js';

const security = await importBuild<typeof Security>(
  ensureInterlockBuild({ modules: true }),
  'security/index.js',
);

const CHECKS = 20_000;
const WARMUP = 2_000;

const WORDS =
  'the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were her she there had all one their we can has more will if when been would who what so no out up into said some could them other then than only its time these two may first like new also any my now over such our man me even most made after did many before must well back through years where much your way down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three'.split(
    ' ',
  );

/** Text of `chars` characters: words with numbers, as mail and documents have. */
function prose(chars: number, rand: () => number): string {
  const parts: string[] = [];
  let n = 0;
  while (n < chars) {
    const w = WORDS[Math.floor(rand() * WORDS.length)]!;
    const word = rand() < 0.1 ? `${w}${Math.floor(rand() * 10_000)}` : w;
    parts.push(word);
    n += word.length + 1;
  }
  return parts.join(' ').slice(0, chars);
}

const FLOW_POLICY = {
  version: 1,
  labels: [{ resource: 'mcp:mail:read_*', labels: ['private'] }],
  rules: [
    { id: 'mail', effect: 'allow', resource: 'mcp:mail:*', actions: 'execute' },
    {
      id: 'no-leaks',
      effect: 'deny',
      resource: 'mcp:mail:send_email',
      actions: 'execute',
      when: { args: { to: { noneOf: ['me@example.com'] } }, flow: { carries: ['private'] } },
    },
  ],
};
const PLAIN_POLICY = {
  version: 1,
  rules: [
    { id: 'mail', effect: 'allow', resource: 'mcp:mail:*', actions: 'execute' },
    {
      id: 'not-me',
      effect: 'deny',
      resource: 'mcp:mail:send_email',
      actions: 'execute',
      when: { args: { to: { noneOf: ['me@example.com'] } } },
    },
  ],
};

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

const round = (x: number, digits = 3) => Math.round(Math.max(0, x) * 10 ** digits) / 10 ** digits;

/** p50 and p99 of `check` in µs, minus the timer's own cost. */
function timeChecks(set: CapabilitySet, context: CheckContext, expectAllowed: boolean) {
  for (let i = 0; i < WARMUP; i++) set.check('mcp:mail:send_email', 'execute', context);
  const times = new Float64Array(CHECKS);
  for (let i = 0; i < CHECKS; i++) {
    const t0 = process.hrtime.bigint();
    const d = set.check('mcp:mail:send_email', 'execute', context);
    const t1 = process.hrtime.bigint();
    times[i] = Number(t1 - t0) / 1000;
    if (d.allowed !== expectAllowed) throw new Error(`unexpected decision: ${d.reason}`);
  }
  const empty = new Float64Array(CHECKS);
  for (let i = 0; i < CHECKS; i++) {
    const t0 = process.hrtime.bigint();
    const t1 = process.hrtime.bigint();
    empty[i] = Number(t1 - t0) / 1000;
  }
  times.sort();
  empty.sort();
  const overhead = percentile(empty, 0.5);
  return {
    p50Us: round(percentile(times, 0.5) - overhead),
    p99Us: round(percentile(times, 0.99) - overhead),
  };
}

/** A session holding `kb` KB of private mail, recorded in 10 KB messages. */
function session(set: CapabilitySet, kb: number, rand: () => number): { flow: FlowState; text: string } {
  const flow = set.flowLabels.createFlowState();
  let text = '';
  for (let done = 0; done < kb; done += 10) {
    const message = prose(10 * 1024, rand);
    flow.record('mcp:mail:read_inbox', ['private'], message);
    if (text.length < 64 * 1024) text += message;
  }
  return { flow, text };
}

function checkScenarios() {
  const rand = random(42);
  const flowSet = security.CapabilitySet.fromPolicy(FLOW_POLICY);
  const plainSet = security.CapabilitySet.fromPolicy(PLAIN_POLICY);
  // Words spelt backwards: text that shares no fragment with the recorded mail, so the search finds nothing.
  const unrelated = prose(1024, random(7))
    .split(' ')
    .map((w) => [...w].reverse().join(''))
    .join(' ');
  const rows = [];
  for (const kb of [100, 1024]) {
    const { flow, text } = session(flowSet, kb, rand);
    const carrying = `${unrelated.slice(0, 900)} ${text.slice(5000, 5100)}`;
    const labels = ['egress'];
    const base = { flow, labels };
    rows.push({
      scenario: `no flow rule, 1 KB argument (session ${kb} KB)`,
      ...timeChecks(plainSet, { ...base, args: { to: 'x@example.com', body: unrelated } }, false),
    });
    rows.push({
      scenario: `carries rule, 1 KB argument carrying nothing, session ${kb} KB`,
      ...timeChecks(flowSet, { ...base, args: { to: 'x@example.com', body: unrelated } }, true),
    });
    rows.push({
      scenario: `carries rule, 1 KB argument carrying a fragment, session ${kb} KB`,
      ...timeChecks(flowSet, { ...base, args: { to: 'x@example.com', body: carrying } }, false),
    });
    rows.push({
      scenario: `carries rule, to the user's own address (provenance not searched), session ${kb} KB`,
      ...timeChecks(flowSet, { ...base, args: { to: 'me@example.com', body: carrying } }, true),
    });
  }
  return rows;
}

function recordScenarios() {
  const rows = [];
  const rand = random(9);
  for (const [label, size, count] of [
    ['10 KB documents', 10 * 1024, 100],
    ['one 1 MB document', 1024 * 1024, 1],
  ] as const) {
    const docs = Array.from({ length: count }, () => prose(size, rand));
    const times: number[] = [];
    let stats: FlowState['indexStats'] | undefined;
    for (let round = 0; round < 5; round++) {
      const flow = new security.FlowState();
      const t0 = process.hrtime.bigint();
      for (const d of docs) flow.record('mcp:mail:read_inbox', ['private'], d);
      const t1 = process.hrtime.bigint();
      times.push(Number(t1 - t0) / 1e6);
      stats = flow.indexStats;
    }
    times.sort((a, b) => a - b);
    const kb = (size * count) / 1024;
    const mb = kb / 1024;
    rows.push({
      scenario: `record ${label} (${round(mb, 2)} MB)`,
      msPerKb: round(times[2]! / kb, 4),
      msPerMb: round(times[2]! / mb, 1),
      fingerprintsPerMb: Math.round(stats!.fingerprints / mb),
      indexMbPerMb: round(stats!.bytes / (1024 * 1024) / mb),
    });
  }
  return rows;
}

const checks = checkScenarios();
console.table(checks);
const records = recordScenarios();
console.table(records);
console.log(machineLine());
console.log(`wrote ${writeScenarioResults('flow-check', { checks, records })}`);
