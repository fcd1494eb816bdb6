/**
 * The published build, for the tests that run what users install: `dist/` as `npm run build` leaves it. CI
 * builds before the tests; locally it is built here when missing or older than `src/`.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function newestMtime(dir: string, suffix: string): number {
  let newest = 0;
  for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (file.endsWith(suffix)) newest = Math.max(newest, statSync(join(dir, file)).mtimeMs);
  }
  return newest;
}

/** Runs `npm run build` (scripts/build.mjs) unless `dist/` is newer than every source file. */
export async function ensureBuilt(): Promise<void> {
  const marker = join(ROOT, 'dist/index.js');
  const newest = Math.max(
    newestMtime(join(ROOT, 'src'), '.ts'),
    statSync(join(ROOT, 'scripts/build.mjs')).mtimeMs,
  );
  if (existsSync(marker) && statSync(marker).mtimeMs >= newest) return;
  try {
    await promisify(execFile)(process.execPath, [join(ROOT, 'scripts/build.mjs')], {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`npm run build failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}
