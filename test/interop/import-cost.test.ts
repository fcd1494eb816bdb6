import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { describe, expect, it } from 'vitest';
import { defaultStdioEnvironment } from '../../src/interop/transport.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Every module a fresh process loads while importing `entry` (ESM through a loader hook, CommonJS through
 * require.cache), as paths relative to the repository.
 */
async function modulesLoadedBy(entry: string): Promise<string[]> {
  const hook = `data:text/javascript,${encodeURIComponent(
    'export async function load(url, context, next) { console.log("LOADED " + url); return next(url, context); }',
  )}`;
  const code = [
    "import { register, createRequire } from 'node:module';",
    `register(${JSON.stringify(hook)});`,
    `await import(${JSON.stringify(join(root, entry))});`,
    'for (const f of Object.keys(createRequire(import.meta.url).cache)) console.log("LOADED " + f);',
  ].join('\n');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', code],
    { cwd: root },
  );
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('LOADED '))
    .map((l) =>
      l
        .slice('LOADED '.length)
        .replace(/^file:\/\//, '')
        .replace(`${root}/`, ''),
    );
}

describe('what importing mcp-interlock/interop loads (issue 15, import time)', () => {
  it('loads neither the engine, session, providers nor inversify, and leaves HTTP, validation and telemetry for later', async () => {
    const loaded = await modulesLoadedBy('src/interop/index.ts');
    expect(loaded.some((f) => f.startsWith('src/interop/manager.ts'))).toBe(true);
    const packageOf = (f: string) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f)?.[1];
    const packages = new Set(loaded.map(packageOf).filter((p) => p !== undefined));
    // What the interop entry does need is seen (the listing works).
    expect(packages.has('@modelcontextprotocol/client')).toBe(true);
    expect(packages.has('zod')).toBe(true);
    for (const late of [
      'inversify',
      'undici',
      'ajv',
      'ajv-formats',
      're2js',
      'ipaddr.js',
      '@opentelemetry/api',
      'signal-exit',
      'cross-spawn',
    ]) {
      expect(packages.has(late), `${late} is loaded at import`).toBe(false);
    }
    const areas = loaded.filter((f) => /^src\/(engine|session|providers|cli|gateway|adapters)\//.test(f));
    expect(areas).toEqual([]);
  });
});

describe('the default environment of stdio servers', () => {
  it("is the SDK's getDefaultEnvironment, without loading the SDK's stdio module", () => {
    expect(defaultStdioEnvironment()).toEqual(getDefaultEnvironment());
  });
});
