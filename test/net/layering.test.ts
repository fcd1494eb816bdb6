// Issue 15: the HTTP/SSRF stack is an area below interop. It may use errors, the redactor and security's glob
// matcher, and nothing above it; config-to-HTTP wiring lives in src/config, not here.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const NET = new URL('../../src/net/', import.meta.url);
const ALLOWED = new Set(['../errors.js', '../redact.js', '../security/pattern.js']);

function relativeImports(file: string): string[] {
  const text = readFileSync(new URL(file, NET), 'utf8');
  return [...text.matchAll(/^(?:import|export)[^;]*?from '(\.[^']+)'/gms)].map((m) => m[1] as string);
}

describe('the net area', () => {
  it('imports only its own files, errors, the redactor and the glob matcher', () => {
    const files = readdirSync(NET).filter((f) => f.endsWith('.ts'));
    expect(files).toEqual(expect.arrayContaining(['http.ts', 'index.ts', 'network.ts', 'proxy-tunnel.ts']));
    const outside = files.flatMap((file) =>
      relativeImports(file)
        .filter((target) => target.startsWith('../') && !ALLOWED.has(target))
        .map((target) => `${file} -> ${target}`),
    );
    expect(outside).toEqual([]);
  });

  it('is what mcp-interlock/interop re-exports, so users importing from there keep working', async () => {
    const net = await import('../../src/net/index.js');
    const interop = await import('../../src/interop/index.js');
    for (const name of Object.keys(net)) {
      expect(interop[name as keyof typeof interop], name).toBe(net[name as keyof typeof net]);
    }
  });
});
