import { describe, expect, it } from 'vitest';
import { ErrorCode, InterlockError, isInterlockError } from '../../src/errors.js';

describe('errors', () => {
  it('carries a stable code and its class name', () => {
    const err = new InterlockError(ErrorCode.NOT_CONNECTED, 'x');
    expect(err.code).toBe('NOT_CONNECTED');
    expect(err.name).toBe('InterlockError');
    expect(isInterlockError(err, 'NOT_CONNECTED')).toBe(true);
    expect(isInterlockError(new Error('x'))).toBe(false);
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
        './gateway',
      ]),
    );
  });

  it('is named mcp-interlock and keeps the interlock command', async () => {
    const { readFileSync } = await import('node:fs');
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      name: string;
      bin: Record<string, string>;
    };
    expect(pkg.name).toBe('mcp-interlock');
    expect(Object.keys(pkg.bin)).toEqual(['interlock']);
  });

  it('never imports its own name from src/ (that name resolves to dist/ once published)', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const root = new URL('../../src/', import.meta.url);
    const offenders = readdirSync(root, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .filter((file) => /from '(mcp-interlock)(\/[a-z]+)?'/.test(readFileSync(new URL(file, root), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('has no side effects on import: nothing starts, no listener is added', async () => {
    const { readFileSync } = await import('node:fs');
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      exports: Record<string, string | { default: string }>;
    };
    const before = process.listenerCount('exit') + process.listenerCount('SIGINT');
    for (const target of Object.values(pkg.exports)) {
      // The adapters import their framework, and @openai/agents adds a SIGINT listener of its own when imported.
      if (typeof target !== 'object' || target.default.startsWith('./dist/adapters/')) continue;
      await import(
        new URL(target.default.replace(/^\.\/dist\//, '../../src/').replace(/\.js$/, '.ts'), import.meta.url)
          .href
      );
    }
    expect(process.listenerCount('exit') + process.listenerCount('SIGINT')).toBe(before);
  });
});
