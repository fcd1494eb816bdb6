/**
 * `interlock demo | head -1`: when the reader goes away, the CLI stops quietly (exit 0, no EPIPE stack).
 * Its servers go with it through the exit hook that test/faults/parent-exit.test.ts covers.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const main = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

describe('a closed stdout', () => {
  it('ends the command without an EPIPE crash and without leftover processes', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', main, 'demo'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    // Read the first chunk, then hang up, as `| head -1` does.
    await once(child.stdout, 'data');
    child.stdout.destroy();
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
  });
});
