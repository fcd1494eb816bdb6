/**
 * The invocation pipeline's composition (issue 15): stages run in order around the terminal, a stage can answer
 * instead of calling `next`, skipped stages are left out, and the authorize stage records what the gate decided.
 */
import { describe, expect, it } from 'vitest';
import {
  authorizeOne,
  compose,
  type Invocation,
  type Stage,
  type Terminal,
} from '../../src/interop/pipeline.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { CapabilityGate } from '../../src/security/gate.js';

interface Ctx {
  log: string[];
}

const named =
  (name: string): Stage<Ctx, string> =>
  async (ctx, next) => {
    ctx.log.push(`${name} in`);
    const result = await next(ctx);
    ctx.log.push(`${name} out`);
    return result;
  };

describe('compose', () => {
  it('runs the stages in order around the terminal, and unwinds them in reverse', async () => {
    const terminal: Terminal<Ctx, string> = async (ctx) => {
      ctx.log.push('terminal');
      return 'done';
    };
    const run = compose([named('trace'), undefined, named('authorize'), named('limit')], terminal);
    const ctx: Ctx = { log: [] };
    await expect(run(ctx)).resolves.toBe('done');
    expect(ctx.log).toEqual([
      'trace in',
      'authorize in',
      'limit in',
      'terminal',
      'limit out',
      'authorize out',
      'trace out',
    ]);
  });

  it('lets a stage answer without calling next: the stages after it and the terminal never run', async () => {
    const refuse: Stage<Ctx, string> = (ctx) => {
      ctx.log.push('refused');
      return Promise.reject(new Error('denied'));
    };
    const run = compose([named('trace'), refuse, named('limit')], async (ctx) => {
      ctx.log.push('terminal');
      return 'sent';
    });
    const ctx: Ctx = { log: [] };
    await expect(run(ctx)).rejects.toThrow('denied');
    expect(ctx.log).toEqual(['trace in', 'refused']);
  });

  it('is reusable: one composed chain serves many calls, each with its own context', async () => {
    const run = compose([named('a')], async (ctx) => ctx.log.length.toString());
    const results = await Promise.all([run({ log: [] }), run({ log: ['x'] })]);
    expect(results).toEqual(['1', '2']);
  });
});

describe('authorizeOne', () => {
  it('resolves to the gate’s decision, and rejects with an error that carries it', async () => {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:srv:roots', 'request', { id: 'roots-ok' });
    const gate = new CapabilityGate({ capabilities });
    const ctx: Invocation = {
      kind: 'server-request',
      request: { resource: 'mcp:srv:roots', action: 'request', server: 'srv' },
      gate,
      span: undefined,
      spanContext: undefined,
      decision: undefined,
      revision: 0,
      invalid: undefined,
      sent: false,
    };
    const allowed = await authorizeOne(ctx, ctx.request);
    expect(allowed).toMatchObject({ allowed: true, effect: 'allow', ruleId: 'roots-ok' });
    await expect(
      authorizeOne(ctx, { resource: 'mcp:srv:sampling', action: 'request', server: 'srv' }),
    ).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
      decision: { allowed: false, effect: 'default-deny' },
    });
  });
});
