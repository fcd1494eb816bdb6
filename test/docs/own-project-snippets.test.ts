/**
 * Getting started's "In your own project" sample (docs/snippets/getting-started/own-project/first-call.ts), run
 * here against the sources; test/smoke/newcomer.test.ts runs the same file from a project that installed the
 * packed tarball.
 */
import { describe, expect, it, vi } from 'vitest';

describe('own-project snippets', () => {
  it('first-call.ts: a call denied by default, one grant, the same call allowed', async () => {
    const lines: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
    try {
      await import('../../docs/snippets/getting-started/own-project/first-call.js');
    } finally {
      log.mockRestore();
    }
    expect(lines).toEqual([
      'denied: CAPABILITY_DENIED mcp:notes:read_note execute',
      'Welcome to the notes server.',
    ]);
  });
});
