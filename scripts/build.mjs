#!/usr/bin/env node
/**
 * `npm run build`: the published `dist/` (issue 15, import time).
 *
 * 1. `tsc -p tsconfig.build.json` type-checks and compiles `src/` into a staging directory, with the
 *    declarations (`.d.ts`, `@internal` stripped) written straight to the output directory.
 * 2. esbuild links the compiled modules into one file per entry point of package.json's `exports` (and the
 *    `bin`), with the code two entries share split into `chunks/`, so `import('mcp-interlock/interop')` reads a
 *    handful of files instead of about sixty. In Node 20 each ES module costs a resolve, a read, a compile and a
 *    link of its own; for this package that per-module cost was most of the import time. Dependencies stay
 *    external (`import 'zod'` is left as it is), and lazily loaded modules (`import('./connection.js')`) stay
 *    lazy, as split points. esbuild only links: the JavaScript is tsc's, so the semantics are tsc's.
 *
 *   node scripts/build.mjs [--out dist] [--modules]
 *
 * `--out` builds elsewhere (the benchmark builds `bench/.build`); the directory must sit at the repository's root
 * level or below it, where `node_modules` resolves. `--modules` stops after step 1 and keeps tsc's modules one file
 * each: the micro benchmarks that measure an internal class (`InterlockClient`, which no entry point exports) load
 * it by its path, and CPU profiles name the source file of each function. The build is written next to the output directory and moved
 * into place at the end, so a process reading the old build (a test run) never sees half of a new one.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: { out: { type: 'string', default: 'dist' }, modules: { type: 'boolean', default: false } },
});
const out = resolve(root, values.out);

/** The JavaScript files package.json names as entry points, relative to the output directory. */
function entryPoints() {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const files = new Set();
  for (const target of Object.values(pkg.exports)) {
    if (typeof target === 'object' && typeof target.default === 'string') files.add(target.default);
  }
  for (const bin of Object.values(pkg.bin ?? {})) files.add(bin);
  return [...files].map((file) => {
    if (!file.replace(/^\.\//, '').startsWith('dist/') || !file.endsWith('.js')) {
      throw new Error(
        `package.json names ${file} as an entry point; every entry point must be a .js file in dist/`,
      );
    }
    return file.replace(/^\.\//, '').slice('dist/'.length);
  });
}

// Both sit at the output's depth, so the relative paths in source maps and declaration maps stay right.
const staging = mkdtempSync(join(root, '.build-staging-'));
const next = mkdtempSync(join(dirname(out), '.build-next-'));
/** Where tsc writes JavaScript: straight to the output when it is kept as it is. */
const emitted = values.modules ? next : staging;
try {
  execFileSync(
    process.execPath,
    [
      join(root, 'node_modules/typescript/bin/tsc'),
      '-p',
      join(root, 'tsconfig.build.json'),
      '--outDir',
      emitted,
      '--declarationDir',
      next,
    ],
    { stdio: 'inherit' },
  );
  const entries = entryPoints();
  for (const entry of entries) {
    if (!existsSync(join(emitted, entry)))
      throw new Error(`tsc did not emit ${entry}: is it in package.json by mistake?`);
  }
  if (!values.modules) await link(entries);
  const old = `${next}.old`;
  if (existsSync(out)) renameSync(out, old);
  renameSync(next, out);
  rmSync(old, { recursive: true, force: true });
  const how = values.modules ? 'modules, unlinked' : 'linked';
  console.log(`built ${relative(root, out) || '.'}: ${entries.length} entry points (${how})`);
} finally {
  rmSync(staging, { recursive: true, force: true });
  rmSync(next, { recursive: true, force: true });
}

/** Step 2: tsc's modules in `staging` linked into `next`, one file per entry point plus shared chunks. */
async function link(entries) {
  await build({
    absWorkingDir: root,
    entryPoints: entries.map((entry) => ({ in: join(staging, entry), out: entry.replace(/\.js$/, '') })),
    outdir: next,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    chunkNames: 'chunks/[name]-[hash]',
    // Reads tsc's source maps, so the published maps point at src/.
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'none',
    logLevel: 'warning',
  });
}
