/**
 * Per-call cost of one in-process call path, for the micro benchmarks (bench/pipeline-cost.ts,
 * bench/client-cost.ts): CPU per call sequentially and with 16 calls in flight (the median over rounds, after one
 * unmeasured warm-up run), and the bytes a call allocates.
 */
import { Session } from 'node:inspector/promises';
import { median } from './stats.js';

/** What {@link measurePerCall} found. */
export interface PerCallCost {
  /** CPU µs per call, one call at a time (median over rounds). */
  sequentialUs: number;
  /** CPU µs per call, 16 in flight (median over rounds). */
  concurrentUs: number;
  /** Bytes allocated per call with 16 in flight, garbage included. */
  bytes: number;
}

interface SamplingNode {
  selfSize: number;
  children: SamplingNode[];
}

/** Calls `call` `calls` times sequentially and with 16 in flight, `rounds` times each, and once more for memory. */
export async function measurePerCall(
  call: () => Promise<unknown>,
  options: { calls: number; rounds: number },
): Promise<PerCallCost> {
  const { calls, rounds } = options;
  const sequential = async () => {
    for (let i = 0; i < calls; i++) await call();
  };
  const concurrent = async () => {
    let left = calls;
    const lane = async () => {
      while (left-- > 0) await call();
    };
    await Promise.all(Array.from({ length: 16 }, lane));
  };
  const cpuPerCall = async (run: () => Promise<void>) => {
    const before = process.cpuUsage();
    await run();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / calls;
  };
  await sequential(); // warm-up: V8 optimizes the path before anything is counted
  const seq: number[] = [];
  const c16: number[] = [];
  for (let r = 0; r < rounds; r++) {
    seq.push(await cpuPerCall(sequential));
    c16.push(await cpuPerCall(concurrent));
  }
  return {
    sequentialUs: median(seq),
    concurrentUs: median(c16),
    bytes: await bytesPerCall(concurrent, calls),
  };
}

/** Bytes allocated per call over `run`, garbage included (V8's sampling heap profiler, a sample every 256 bytes). */
async function bytesPerCall(run: () => Promise<void>, calls: number): Promise<number> {
  const session = new Session();
  session.connect();
  try {
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 256,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    } as never);
    await run();
    const { profile } = await session.post('HeapProfiler.stopSampling');
    const total = (node: SamplingNode): number =>
      node.children.reduce((sum, child) => sum + total(child), node.selfSize);
    return total(profile.head as unknown as SamplingNode) / calls;
  } finally {
    session.disconnect();
  }
}

/** One Markdown table row: name, the two CPU figures and the bytes. */
export function perCallRow(name: string, cost: PerCallCost): string {
  return `| ${name} | ${cost.sequentialUs.toFixed(2)} | ${cost.concurrentUs.toFixed(2)} | ${cost.bytes.toFixed(0)} |`;
}
