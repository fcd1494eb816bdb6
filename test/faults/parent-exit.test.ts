/** When the app process ends (SIGTERM, SIGINT or a normal exit), its server process groups end with it. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { waitForExit } from '../helpers/processes.js';

const app = fileURLToPath(new URL('../fixtures/parent-app.ts', import.meta.url));

describe.each(['SIGTERM', 'SIGINT'] as const)('an app stopped with %s', (signal) => {
  it('takes its stdio servers and their children with it', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', app], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout });
    const [first] = (await once(lines, 'line')) as [string];
    const pids = JSON.parse(first) as { pid: number; server: number; grandchild: number };
    child.kill(signal);
    const [code, sig] = (await once(child, 'exit')) as [number | null, string | null];
    // signal-exit re-raises the signal, so the app still dies of it as it would without us.
    expect(sig ?? code).toBeTruthy();
    for (const pid of [pids.pid, pids.server, pids.grandchild])
      expect(await waitForExit(pid, 5_000)).toBe(true);
  });
});
