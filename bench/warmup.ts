/**
 * Warm-up (issue 15): how the client CPU per call falls over a process's first calls, block by block, and how much
 * of it V8 spent compiling. The `calls` figures of `npm run bench` measure calls 500 to 3 500 after 500 unmeasured
 * ones; a path with more JavaScript on it keeps paying for its optimization well into that window, and the
 * sequential row shows it most. This script separates that one-time cost from the steady cost of a call.
 *
 *   node --import tsx bench/warmup.ts [--contenders sdk,interlock,ai-sdk] [--server stdio-raw]
 *                                     [--block 500] [--blocks 8] [--rounds 3]
 *
 * Each round runs every contender's `warmup` job twice in fresh processes: once plain, for the CPU per call of each
 * block (median over rounds), and once under `node --trace-opt`, for the milliseconds V8's optimizing compiler
 * reported for the functions it finished compiling during each block (its background thread's time, which the
 * process's CPU includes). Prints two Markdown tables.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BENCH_DIR, ROOT_DIR } from './lib/paths.js';
import type { WorkerResult } from './lib/protocol.js';
import { median } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    contenders: { type: 'string', default: 'sdk,interlock,ai-sdk' },
    server: { type: 'string', default: 'stdio-raw' },
    block: { type: 'string', default: '500' },
    blocks: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
  },
});
const contenders = values.contenders.split(',').map((c) => c.trim());
const blocks = Number(values.blocks);
const rounds = Number(values.rounds);
for (const [name, value] of Object.entries({ block: values.block, blocks, rounds })) {
  if (!Number.isInteger(Number(value)) || Number(value) < 1)
    throw new Error(`--${name} must be a positive integer`);
}
if (values.server === 'http')
  throw new Error('--server must be stdio-raw or stdio-sdk (http needs a server URL)');

/** One `warmup` job in a fresh process; with `traceOpt`, also the optimizing compiler's milliseconds per block. */
function run(contender: string, traceOpt: boolean): { cpu: number[]; compileMs: number[] } {
  const child = spawnSync(
    process.execPath,
    [
      ...(traceOpt ? ['--trace-opt'] : []),
      '--import',
      'tsx',
      join(BENCH_DIR, 'contenders', `${contender}.ts`),
      '--job',
      'warmup',
      '--server',
      values.server,
      '--calls',
      values.block,
      '--blocks',
      String(blocks),
    ],
    {
      cwd: ROOT_DIR,
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      env: { ...process.env, BENCH_BLOCK_MARKERS: '1' },
    },
  );
  const lines = child.stdout.split('\n');
  const last = lines.findLast((l) => l.startsWith('{"ok"'));
  if (last === undefined) throw new Error(`${contender}: no result\n${child.stderr}`);
  const result = JSON.parse(last) as WorkerResult;
  if (!result.ok || result.job !== 'warmup') throw new Error(`${contender}: ${JSON.stringify(result)}`);
  // `--trace-opt` prints "[completed compiling <JSFunction f> (target TURBOFAN) - took a, b, c ms]": the three
  // phases (prepare, execute on the background thread, finalize); summed per block of calls.
  const compileMs = new Array<number>(blocks).fill(0);
  let block = 0;
  for (const line of lines) {
    if (line.startsWith('@@block ')) block = Number(line.slice(8)) + 1;
    else if (block < blocks && line.includes('completed compiling')) {
      const took = /took ([\d.]+), ([\d.]+), ([\d.]+) ms/.exec(line);
      if (took !== null) compileMs[block]! += Number(took[1]) + Number(took[2]) + Number(took[3]);
    }
  }
  return { cpu: result.cpuUsPerCall, compileMs };
}

const cpu = new Map<string, number[][]>(contenders.map((c) => [c, []]));
const compile = new Map<string, number[][]>(contenders.map((c) => [c, []]));
for (let r = 0; r < rounds; r++) {
  for (const contender of contenders) {
    process.stderr.write(`round ${r + 1}/${rounds}: ${contender}\n`);
    cpu.get(contender)!.push(run(contender, false).cpu);
    compile.get(contender)!.push(run(contender, true).compileMs);
  }
}

const block = Number(values.block);
const header = Array.from({ length: blocks }, (_, i) => `${i * block + 1}–${(i + 1) * block}`);
function table(title: string, data: Map<string, number[][]>, digits: number): string {
  const rows = contenders.map((c) => {
    const cells = header.map((_, i) => median(data.get(c)!.map((round) => round[i]!)).toFixed(digits));
    return `| ${c} | ${cells.join(' | ')} |`;
  });
  return [
    title,
    '',
    `| Contender | ${header.join(' | ')} |`,
    `| --- | ${header.map(() => '---:').join(' | ')} |`,
    ...rows,
    '',
  ].join('\n');
}

process.stdout.write(
  [
    `Warm-up over ${values.server}, sequential calls by block of ${block} (median of ${rounds} rounds; Node ${process.version})`,
    '',
    table('Client CPU per call (µs)', cpu, 1),
    table("Time V8's optimizing compiler reported for functions finished in the block (ms)", compile, 0),
  ].join('\n'),
);
