import { describe, expect, it } from 'vitest';
import { ErrorCode, InteropError, isInteropError } from '../../src/errors.js';

describe('errors', () => {
  it('carries a stable code and its class name', () => {
    const err = new InteropError(ErrorCode.NOT_CONNECTED, 'x');
    expect(err.code).toBe('NOT_CONNECTED');
    expect(err.name).toBe('InteropError');
    expect(isInteropError(err, 'NOT_CONNECTED')).toBe(true);
    expect(isInteropError(new Error('x'))).toBe(false);
  });
});

describe('package exports', () => {
  it('maps every public area to a source entry point, with no wildcard subpath', async () => {
    const { readFileSync, existsSync } = await import('node:fs');
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      exports: Record<string, string | { types: string; default: string }>;
      engines: { node: string };
      type: string;
    };
    expect(pkg.type).toBe('module');
    expect(pkg.engines.node).toBe('>=20.18');
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      expect(subpath).not.toContain('*');
      if (typeof target === 'string') continue;
      const source = target.default.replace('./dist/', './src/').replace(/\.js$/, '.ts');
      expect(existsSync(new URL(`../../${source}`, import.meta.url)), `${subpath} -> ${source}`).toBe(true);
    }
    expect(Object.keys(pkg.exports)).toEqual(
      expect.arrayContaining([
        '.',
        './interop',
        './security',
        './session',
        './tools',
        './engine',
        './providers',
        './testing',
      ]),
    );
  });

  it('has no side effects on import: nothing starts, no listener is added', async () => {
    const before = process.listenerCount('exit') + process.listenerCount('SIGINT');
    await import('../../src/index.js');
    expect(process.listenerCount('exit') + process.listenerCount('SIGINT')).toBe(before);
  });
});
