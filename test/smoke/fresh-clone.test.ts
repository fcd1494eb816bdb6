/**
 * Issue 39: the README's two commands (`npm ci && npm run demo`, then `npm test`) are all the set-up a fresh clone
 * needs. Every directory with its own lockfile is installed by one of our scripts (scripts/installs.mjs), and
 * that install notices a directory that is missing or whose lockfile changed. `node scripts/fresh-clone.mjs`
 * (run by .ci/run) checks the same on a real clone.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureInstalled, installState, ROOT, SIDE_INSTALLS } from '../../scripts/installs.mjs';

const sides = SIDE_INSTALLS;
const state = installState;
const ensure = ensureInstalled;

describe("the README's commands on a fresh clone", () => {
  it('install every directory of the repository that has its own lockfile', () => {
    const lockfiles = execFileSync('git', ['ls-files', '--', 'package-lock.json', '**/package-lock.json'], {
      cwd: ROOT,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((line) => line !== '');
    const dirs = lockfiles.map((file) => dirname(file)).filter((dir) => dir !== '.');
    expect(lockfiles).toContain('package-lock.json');
    expect(Object.keys(sides).sort()).toEqual(dirs.sort());
    const scripts = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    for (const [dir, { installedBy }] of Object.entries(sides)) {
      // The npm script named for the directory runs a script of ours that installs it before anything else.
      const script = /^node (scripts\/\S+\.mjs)/.exec(scripts[installedBy] ?? '')?.[1];
      expect(script, `npm run ${installedBy}`).toBeDefined();
      expect(readFileSync(join(ROOT, script!), 'utf8'), script).toContain(`ensureInstalled('${dir}')`);
    }
  });

  it('leave bench/ installed as its lockfile says when the suite runs through npm test', () => {
    expect(
      state(join(ROOT, 'bench')),
      'bench/node_modules: run the tests with `npm test`, which installs it',
    ).toBe('current');
  });
});

describe('installing a directory with its own lockfile', () => {
  const root = mkdtempSync(join(tmpdir(), 'interlock-installs-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /** A package `pkg` whose one dependency is the local directory `dep` at `version`: npm installs it offline. */
  function project(version: string): string {
    const dep = join(root, 'dep');
    const pkg = join(root, 'pkg');
    mkdirSync(dep, { recursive: true });
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(dep, 'package.json'), JSON.stringify({ name: 'dep', version }));
    const manifest = { name: 'pkg', version: '0.0.0', private: true, dependencies: { dep: 'file:../dep' } };
    writeFileSync(join(pkg, 'package.json'), JSON.stringify(manifest));
    const lock = {
      name: 'pkg',
      version: '0.0.0',
      lockfileVersion: 3,
      requires: true,
      packages: {
        '': { name: 'pkg', version: '0.0.0', dependencies: { dep: 'file:../dep' } },
        '../dep': { version },
        'node_modules/dep': { resolved: '../dep', link: true },
      },
    };
    writeFileSync(join(pkg, 'package-lock.json'), JSON.stringify(lock, null, 2));
    return pkg;
  }

  it('installs it when it is missing, again when its lockfile changed, and not when it is current', () => {
    const pkg = project('1.0.0');
    const said: string[] = [];
    const log = (line: string) => said.push(line);
    expect(state(pkg)).toBe('missing');
    expect(ensure(pkg, { log })).toBe('missing');
    expect(state(pkg)).toBe('current');
    expect(said).toEqual([`${pkg}/: installing its packages (not installed yet)`]);

    expect(ensure(pkg, { log })).toBe('current');
    expect(said).toHaveLength(1);

    project('1.0.1');
    expect(state(pkg)).toBe('stale');
    expect(ensure(pkg, { log })).toBe('stale');
    expect(said[1]).toBe(`${pkg}/: installing its packages (its lockfile changed)`);
    expect(state(pkg)).toBe('current');
  }, 120_000);

  it("fails with npm's own words when the install cannot be done", () => {
    const pkg = project('1.0.0');
    // A lockfile that does not match package.json: npm ci refuses it.
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({ name: 'pkg', version: '0.0.0', dependencies: { dep: 'file:../dep', other: '1.0.0' } }),
    );
    rmSync(join(pkg, 'node_modules'), { recursive: true, force: true });
    expect(() => ensure(pkg, { log: () => {} })).toThrow(
      /npm ci --prefix .* failed \(exit code \d+\)[\s\S]*npm error/,
    );
  }, 120_000);
});
