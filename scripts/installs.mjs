// The package directories beside the root that have their own lockfile, and what installs them, so that the
// README's two commands (`npm ci && npm run demo`, then `npm test`) are all the set-up a fresh clone needs (issue 39).
//
// They are not npm workspaces on purpose: conformance/ needs Node 22 while the package supports Node 20 (a
// workspace would be installed, and warned about, on every `npm ci`), and bench/ measures its peers at the exact
// versions of its own lockfile, which hoisting into the root's tree would change. Instead the script that needs
// a directory installs it when it is missing or its lockfile changed: `npm test` brings bench/, `npm run
// conformance` brings conformance/. An install that is current costs one read of two lockfiles.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Every directory of the repository with its own package-lock.json other than the root, with the npm script
 * that installs it (test/setup/fresh-clone.test.ts fails when a lockfile is added without an entry here).
 */
export const SIDE_INSTALLS = {
  // test/bench/harness.test.ts runs the benchmark against the peers of bench/package-lock.json.
  bench: { installedBy: 'test' },
  // scripts/conformance.mjs runs the official conformance suite, which needs Node 22.
  conformance: { installedBy: 'conformance' },
};

/**
 * Whether `dir`'s node_modules holds what its lockfile lists: 'current', 'missing' or 'stale'. npm ci writes the
 * tree it installed to node_modules/.package-lock.json; it is current when every package the lockfile lists is
 * there with the same version and integrity (a platform-specific optional package may be left out).
 * @param {string} dir
 * @returns {'current' | 'missing' | 'stale'}
 */
export function installState(dir) {
  /** @type {Record<string, Record<string, unknown>>} */
  let installed;
  try {
    installed = JSON.parse(readFileSync(join(dir, 'node_modules', '.package-lock.json'), 'utf8')).packages;
  } catch {
    return 'missing';
  }
  /** @type {Record<string, Record<string, unknown>>} */
  const wanted = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')).packages;
  for (const [path, entry] of Object.entries(wanted)) {
    if (path === '') continue;
    const have = installed[path];
    if (have === undefined) {
      if (entry.optional === true) continue;
      return 'stale';
    }
    if (have.version !== entry.version || have.integrity !== entry.integrity) return 'stale';
  }
  for (const path of Object.keys(installed)) if (wanted[path] === undefined) return 'stale';
  return 'current';
}

/** How to run npm: the one running this script when npm started it, else the one on the PATH. */
function npm(args, options) {
  const cli = process.env.npm_execpath;
  return cli?.endsWith('.js')
    ? spawnSync(process.execPath, [cli, ...args], options)
    : spawnSync('npm', args, { ...options, shell: process.platform === 'win32' });
}

/**
 * Installs `dir` (a key of SIDE_INSTALLS, or a path) with `npm ci` when it is missing or stale; says nothing when
 * it is current. Prefers npm's cache, so it works offline once the packages have been downloaded. Two runs at once
 * wait for each other (a lock directory beside node_modules). Throws with npm's output when the install fails.
 * @param {string} dir
 * @param {{ log?: (line: string) => void }} [options]
 * @returns {'current' | 'missing' | 'stale'} the state it found
 */
export function ensureInstalled(dir, { log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  dir = resolve(ROOT, dir);
  const name = relative(ROOT, dir).startsWith('..') ? dir : relative(ROOT, dir);
  const found = installState(dir);
  if (found === 'current') return found;
  const lock = join(dir, '.install-lock');
  withLock(lock, () => {
    const state = installState(dir);
    if (state === 'current') return;
    log(
      `${name}/: installing its packages (${state === 'missing' ? 'not installed yet' : 'its lockfile changed'})`,
    );
    const run = npm(
      ['ci', '--prefix', dir, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'],
      {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    if (run.status !== 0) {
      throw new Error(
        `npm ci --prefix ${name} failed (${run.error?.message ?? `exit code ${run.status}`}); run it yourself to see why:\n${run.stdout ?? ''}${run.stderr ?? ''}`,
      );
    }
  });
  return found;
}

/** Runs `fn` holding `lock` (a directory): waits while another live process holds it. */
function withLock(lock, fn) {
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      // A lock left by a process that died (older than ten minutes: no install takes that long) is taken over.
      try {
        if (Date.now() - statSync(lock).mtimeMs > 600_000) rmSync(lock, { recursive: true, force: true });
      } catch {}
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
