/** The README cannot drift: its example is examples/quickstart.ts verbatim, and its two commands exist. */
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

  it('starts with the demo and the test command, both real scripts', () => {
    const commands = /```sh\n([\s\S]*?)\n```/.exec(readme)?.[1]?.split('\n') ?? [];
    expect(commands[0]).toMatch(/^npm ci && npm run demo\b/);
    expect(commands[1]).toMatch(/^npm test\b/);
    expect(pkg.scripts.demo).toBeTruthy();
    expect(pkg.scripts.test).toBeTruthy();
  });
});
