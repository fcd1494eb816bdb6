/**
 * The published build (issue 15, import time): scripts/build.mjs links tsc's modules into one file per entry point
 * plus shared chunks. These tests hold that the linked build offers what the sources offer, that one entry point
 * reads only its own file and chunks, and that what is loaded lazily in the sources stays lazy in the build.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../cli/helpers.js';
import { ensureBuilt } from '../helpers/build.js';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { default: string }>;
};
const ENTRIES = Object.entries(pkg.exports)
  .filter((e): e is [string, { default: string }] => typeof e[1] === 'object')
  .map(([name, target]) => ({ name, dist: target.default.replace(/^\.\//, '') }));

/** Every file a fresh plain-Node process loads while importing `file`, as URLs. */
async function filesLoadedBy(file: string): Promise<string[]> {
  const hook = `data:text/javascript,${encodeURIComponent(
    'import { writeSync } from "node:fs"; export async function load(url, context, next) { writeSync(1, "LOADED " + url + "\\n"); return next(url, context); }',
  )}`;
  const code = [
    "import { register } from 'node:module';",
    `register(${JSON.stringify(hook)});`,
    `await import(${JSON.stringify(pathToFileURL(join(ROOT, file)).href)});`,
  ].join('\n');
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], {
    cwd: ROOT,
  });
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('LOADED '))
    .map((l) => l.slice('LOADED '.length));
}

beforeAll(ensureBuilt, 300_000);

describe('the published build', () => {
  it.each(ENTRIES)('offers the same names as the sources at $name', async ({ dist }) => {
    const source = dist.replace(/^dist\//, 'src/').replace(/\.js$/, '.ts');
    const built = Object.keys(await import(pathToFileURL(join(ROOT, dist)).href)).sort();
    const expected = Object.keys(await import(pathToFileURL(join(ROOT, source)).href)).sort();
    expect(built.length).toBeGreaterThan(0);
    expect(built).toEqual(expected);
  });

  it('reads the interop entry from its own file and shared chunks, a fraction of the modules the sources have', async () => {
    const dist = `${pathToFileURL(join(ROOT, 'dist')).href}/`;
    const own = (await filesLoadedBy('dist/interop/index.js'))
      .filter((url) => url.startsWith(dist))
      .map((url) => url.slice(dist.length));
    expect(own[0]).toBe('interop/index.js');
    expect(
      own.slice(1).every((f) => f.startsWith('chunks/')),
      own.join('\n'),
    ).toBe(true);
    // The sources are about 60 modules at this import; linked, a few dozen files at most.
    expect(own.length).toBeLessThanOrEqual(30);
  });

  it('keeps lazy what the sources load lazily: no HTTP stack, validator, telemetry or inversify at import', async () => {
    const loaded = await filesLoadedBy('dist/interop/index.js');
    const packages = new Set(
      loaded
        .map((url) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1])
        .filter((p) => p !== undefined),
    );
    expect(packages.has('@modelcontextprotocol/client')).toBe(true);
    for (const late of [
      'inversify',
      'undici',
      'ajv',
      're2js',
      'ipaddr.js',
      '@opentelemetry/api',
      'signal-exit',
    ]) {
      expect(packages.has(late), `${late} is loaded at import`).toBe(false);
    }
  });

  it('runs the command line from the build, finding the package it belongs to', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'dist/cli/main.js'), '--version'],
      {
        cwd: ROOT,
      },
    );
    expect(stdout.trim()).toBe(
      (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
    );
  });
});
