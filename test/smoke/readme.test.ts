/**
 * The README cannot drift: its example is examples/quickstart.ts verbatim, and its two commands exist and work
 * as written (`npm run demo` runs here; CI runs `npm ci` and `npm test` as written, see .ci/run).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  scripts: Record<string, string>;
};

describe('README', () => {
  it('shows examples/quickstart.ts verbatim', () => {
    const quickstart = readFileSync(
      new URL('../../examples/quickstart.ts', import.meta.url),
      'utf8',
    ).trimEnd();
    const block = /```typescript\n([\s\S]*?)\n```/.exec(readme)?.[1];
    expect(block).toBe(quickstart);
  });

  // Issue 39: "runs as it is in your own project" was only true with tsx and server-everything installed too.
  it('names every package the example needs in its install line: what it imports, resolves and runs with', () => {
    const quickstart = readFileSync(new URL('../../examples/quickstart.ts', import.meta.url), 'utf8');
    const install = /^\/\/\s+npm install (.+)$/m.exec(quickstart)?.[1]?.trim().split(/\s+/) ?? [];
    const specifiers = [
      ...[...quickstart.matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1] as string),
      ...[...quickstart.matchAll(/resolve\(\s*'([^']+)'/g)].map((m) => m[1] as string),
      ...[...quickstart.matchAll(/--import (\S+)/g)].map((m) => m[1] as string),
    ];
    const packages = specifiers
      .filter((s) => !s.startsWith('node:') && !s.startsWith('.'))
      .map((s) =>
        s
          .split('/')
          .slice(0, s.startsWith('@') ? 2 : 1)
          .join('/'),
      );
    expect(packages).toContain('tsx');
    expect(packages).toContain('@modelcontextprotocol/server-everything');
    expect([...new Set(install)].sort()).toEqual([...new Set(packages)].sort());
  });

  it('starts with the demo and the test command, both real scripts', () => {
    const commands = /```sh\n([\s\S]*?)\n```/.exec(readme)?.[1]?.split('\n') ?? [];
    expect(commands[0]).toMatch(/^npm ci && npm run demo\b/);
    expect(commands[1]).toMatch(/^npm test\b/);
    expect(pkg.scripts.demo).toBeTruthy();
    expect(pkg.scripts.test).toBeTruthy();
    const ci = readFileSync(new URL('../../.ci/run', import.meta.url), 'utf8');
    expect(ci).toMatch(/^npm ci\b/m);
    expect(ci).toMatch(/^\s*npm test\b/m);
  });

  it('runs the demo as written: npm run demo ends with exit code 0 and the audit trail', async () => {
    const root = new URL('../..', import.meta.url);
    const env = { ...process.env };
    delete env.NO_COLOR;
    delete env.FORCE_COLOR;
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        'npm',
        ['run', 'demo', '--silent'],
        { cwd: root, env, timeout: 120_000, killSignal: 'SIGKILL' },
        (error, stdout, stderr) =>
          resolve({ code: error === null ? 0 : Number(error.code ?? -1), stdout, stderr }),
      );
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("allowed by rule 'notes-list'");
    expect(result.stdout).toContain('Audit trail');
  }, 120_000);
});
