// Issue 15, import time: what is built or loaded at first use must behave as if it had been built at import.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { lazyModule, lazySchema, once } from '../src/lazy.js';

function countingBuild() {
  let builds = 0;
  const build = () => {
    builds++;
    return z
      .object({
        port: z.number().int().min(1).default(8080).describe('The port.'),
        host: z.string().min(1).describe('The host.'),
      })
      .strict()
      .describe('Where to listen.');
  };
  return { build, builds: () => builds };
}

describe('once', () => {
  it('builds at the first call and returns the same value after', () => {
    let builds = 0;
    const get = once(() => ({ n: ++builds }));
    expect(builds).toBe(0);
    const first = get();
    expect(get()).toBe(first);
    expect(builds).toBe(1);
  });
});

describe('lazySchema', () => {
  it('builds nothing until first touched, then builds once', () => {
    const { build, builds } = countingBuild();
    const schema = lazySchema(build);
    expect(builds()).toBe(0);
    expect(schema.parse({ host: 'a' })).toEqual({ host: 'a', port: 8080 });
    expect(schema.safeParse({ host: '' }).success).toBe(false);
    expect(builds()).toBe(1);
  });

  it('is a zod schema to instanceof, reads its shape and description, and throws the same errors', () => {
    const { build } = countingBuild();
    const schema = lazySchema(build);
    const real = build();
    expect(schema instanceof z.ZodType).toBe(true);
    expect(schema instanceof z.ZodObject).toBe(true);
    expect(Object.keys(schema.shape)).toEqual(['port', 'host']);
    expect(schema.description).toBe('Where to listen.');
    expect(() => schema.parse({ host: 'a', extra: 1 })).toThrow(z.ZodError);
    expect(schema.safeParse({ port: 0 }).error?.issues).toEqual(real.safeParse({ port: 0 }).error?.issues);
  });

  it('gives the same JSON Schema as the schema it stands for, alone and composed', () => {
    const { build } = countingBuild();
    const schema = lazySchema(build);
    const real = build();
    expect(z.toJSONSchema(schema, { io: 'input' })).toEqual(z.toJSONSchema(real, { io: 'input' }));
    expect(z.toJSONSchema(z.object({ listen: schema }), { io: 'input' })).toEqual(
      z.toJSONSchema(z.object({ listen: real }), { io: 'input' }),
    );
    expect(z.object({ listen: schema.optional() }).parse({})).toEqual({});
    expect(schema.extend({ tls: z.boolean() }).parse({ host: 'h', tls: true })).toEqual({
      host: 'h',
      port: 8080,
      tls: true,
    });
  });
});

describe('lazyModule', () => {
  it('loads at the first load(), shares that load, and keeps the module', async () => {
    let loads = 0;
    const mod = lazyModule(async () => {
      loads++;
      return { answer: 42 };
    });
    expect(mod.loaded).toBeUndefined();
    const [a, b] = await Promise.all([mod.load(), mod.load()]);
    expect(a).toBe(b);
    expect(mod.loaded).toBe(a);
    expect(loads).toBe(1);
  });

  it('tries again after a failed load, and preload swallows the failure for the next load to report', async () => {
    let attempt = 0;
    const mod = lazyModule(async () => {
      attempt++;
      if (attempt === 1) throw new Error('first load fails');
      return { attempt };
    });
    mod.preload();
    await expect(mod.load()).rejects.toThrow('first load fails');
    await expect(mod.load()).resolves.toEqual({ attempt: 2 });
  });
});
