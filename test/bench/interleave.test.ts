/**
 * The order of the harness's measured call blocks (bench/lib/interleave.ts): the contenders take turns block by
 * block, so that load from elsewhere on the machine falls on all of them alike, and no call is lost in the cutting.
 */
import { describe, expect, it } from 'vitest';
import { callSchedule, rotate, splitCalls } from '../../bench/lib/interleave.js';

describe('splitCalls', () => {
  it('cuts the calls into parts that add up to them and differ by one at most', () => {
    for (const [total, parts] of [
      [3000, 10],
      [3001, 10],
      [7, 3],
      [1, 1],
      [100, 1],
    ] as const) {
      const sizes = splitCalls(total, parts);
      expect(sizes).toHaveLength(parts);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(total);
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    }
  });

  it('makes fewer parts than asked rather than an empty one', () => {
    expect(splitCalls(3, 10)).toEqual([1, 1, 1]);
  });
});

describe('callSchedule', () => {
  const order = ['sdk', 'interlock', 'ai-sdk'] as const;
  const schedule = callSchedule(order, 1000, 4, [16, 64]);
  const measured = schedule.filter((step) => !step.warmup);

  it('gives every contender all its calls of every figure, the sequential one first', () => {
    expect(schedule.map((step) => step.concurrency).filter((c, i, all) => c !== all[i - 1])).toEqual([
      'sequential',
      16,
      64,
    ]);
    for (const contender of order) {
      for (const level of ['sequential', 16, 64] as const) {
        const blocks = measured.filter((step) => step.contender === contender && step.concurrency === level);
        expect(blocks).toHaveLength(4);
        expect(blocks.reduce((sum, step) => sum + step.calls, 0)).toBe(1000);
      }
    }
  });

  it('warms every contender up at a figure in turns too, right before that figure is measured', () => {
    const warmed = callSchedule(order, 1000, 4, [16, 64], 6000);
    for (const level of ['sequential', 16, 64] as const) {
      const steps = warmed.filter((step) => step.concurrency === level);
      // All of a figure's warm-up turns, then all its measured blocks: no contender is measured before every
      // contender has warmed up, and none waits out the others' whole warm-ups between its own and its blocks.
      expect(steps.slice(0, 12).every((step) => step.warmup)).toBe(true);
      expect(steps.slice(12).every((step) => !step.warmup)).toBe(true);
      expect(steps.slice(0, 6).map((step) => step.contender)).toEqual([
        ...['sdk', 'interlock', 'ai-sdk'],
        ...['interlock', 'ai-sdk', 'sdk'],
      ]);
      for (const contender of order) {
        const turns = steps.filter((step) => step.warmup && step.contender === contender);
        expect(turns.map((step) => step.calls)).toEqual([1500, 1500, 1500, 1500]);
      }
    }
    // Without warm-up calls there are no warm-up steps.
    expect(schedule.some((step) => step.warmup)).toBe(false);
  });

  it('lets the contenders take turns, in an order that rotates from turn to turn', () => {
    const sequential = measured
      .filter((step) => step.concurrency === 'sequential')
      .map((step) => step.contender);
    expect(sequential).toEqual([
      ...['sdk', 'interlock', 'ai-sdk'],
      ...['interlock', 'ai-sdk', 'sdk'],
      ...['ai-sdk', 'sdk', 'interlock'],
      ...['sdk', 'interlock', 'ai-sdk'],
    ]);
    // Every turn holds each contender once: none runs two blocks of a turn while another waits.
    for (let turn = 0; turn < 4; turn++) {
      expect(new Set(sequential.slice(turn * 3, turn * 3 + 3)).size).toBe(3);
    }
  });

  it('with one block each, measures each figure of a contender in one block, the contenders one after the other', () => {
    expect(
      callSchedule(order, 500, 1, [16])
        .filter((step) => !step.warmup)
        .map((step) => `${step.contender}:${step.concurrency}:${step.calls}`),
    ).toEqual([
      'sdk:sequential:500',
      'interlock:sequential:500',
      'ai-sdk:sequential:500',
      'sdk:16:500',
      'interlock:16:500',
      'ai-sdk:16:500',
    ]);
  });
});

describe('rotate', () => {
  it('starts at the n-th item and wraps around', () => {
    expect(rotate(['a', 'b', 'c'], 1)).toEqual(['b', 'c', 'a']);
    expect(rotate(['a', 'b', 'c'], 4)).toEqual(['b', 'c', 'a']);
    expect(rotate([], 2)).toEqual([]);
  });
});
