// Issue 15: config sits below interop. Interop takes its server schemas from src/config/servers.ts and its
// mcp.json and config-to-HTTP helpers from src/config; nothing src/config reaches, directly or through another
// file, may import src/interop back.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

/** Relative specifiers a file imports: static imports and re-exports (type-only too) and dynamic `import()`. */
function relativeImports(text: string): string[] {
  const fromClauses = [...text.matchAll(/^\s*(?:import|export)[^;]*?from '(\.[^']+)'/gms)];
  const dynamic = [...text.matchAll(/import\(\s*'(\.[^']+)'\s*\)/g)];
  return [...fromClauses, ...dynamic].map((m) => m[1] as string);
}

/** Every source file reached from `start` through relative imports, as paths under src/. */
function reachableFrom(start: readonly string[]): Map<string, string> {
  const via = new Map<string, string>(start.map((f) => [f, f]));
  const queue = [...start];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const spec of relativeImports(readFileSync(join(SRC, file), 'utf8'))) {
      const target = relative(SRC, join(SRC, dirname(file), spec)).replace(/\.js$/, '.ts');
      if (via.has(target) || !existsSync(join(SRC, target))) continue;
      via.set(target, `${via.get(file)} -> ${target}`);
      queue.push(target);
    }
  }
  return via;
}

describe('the config area', () => {
  it('holds the server schemas that interop used to own', () => {
    expect(existsSync(join(SRC, 'config', 'servers.ts'))).toBe(true);
    expect(existsSync(join(SRC, 'interop', 'config.ts'))).toBe(false);
  });

  it('never imports src/interop, directly or through another area', () => {
    const files = readdirSync(join(SRC, 'config'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => `config/${f}`);
    expect(files).toEqual(
      expect.arrayContaining(['config/servers.ts', 'config/mcp-json.ts', 'config/http.ts']),
    );
    const reached = reachableFrom(files);
    // The walk does follow imports out of the area (so a path through another area would be seen).
    expect(reached.has('security/pattern.ts')).toBe(true);
    const intoInterop = [...reached].filter(([f]) => f.startsWith('interop/')).map(([, path]) => path);
    expect(intoInterop).toEqual([]);
  });

  it('sees an import of interop when there is one (the check can fail)', () => {
    expect(
      relativeImports("import type { X } from '../interop/manager.js';\nconst m = import('./y.js');"),
    ).toEqual(['../interop/manager.js', './y.js']);
  });
});
