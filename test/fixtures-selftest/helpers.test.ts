import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  acceptsConnections,
  createFixtureLog,
  descendantPids,
  fixture,
  freePort,
  isAlive,
  nodeFixture,
  openFdCount,
  readFixtureLog,
  waitForExit,
  waitUntil,
} from '../helpers/index.js';

describe('test helpers', () => {
  it('resolves fixture paths and builds node command lines for them', () => {
    expect(fixture('echo')).toMatch(/test\/fixtures\/servers\/echo\.mjs$/);
    expect(fixture('echo.mjs')).toBe(fixture('echo'));
    expect(nodeFixture('paged', ['--x'])).toEqual({
      command: process.execPath,
      args: [fixture('paged'), '--x'],
    });
    expect(() => fixture('missing' as 'echo')).toThrow(/No fixture server/);
  });

  it('finds a free loopback port that nothing accepts connections on', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    expect(await acceptsConnections(port)).toBe(false);
  });

  it('sees a child and grandchild as descendants, and sees them gone after a kill', async () => {
    // A shell whose own child (sleep) is our grandchild.
    const child = spawn('sh', ['-c', 'sleep 30 & wait'], { stdio: 'ignore' });
    const pid = child.pid!;
    try {
      expect(isAlive(pid)).toBe(true);
      const grandchildren = await waitUntil(() => {
        const found = descendantPids(pid);
        return found.length === 1 ? found : undefined;
      });
      expect(descendantPids(process.pid)).toEqual(expect.arrayContaining([pid, ...grandchildren]));
      for (const p of [...grandchildren, pid]) process.kill(p, 'SIGKILL');
      expect(await waitForExit(pid, 5_000)).toBe(true);
      expect(await waitForExit(grandchildren[0]!, 5_000)).toBe(true);
      expect(isAlive(pid)).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('counts this process’s open file descriptors', () => {
    expect(openFdCount()).toBeGreaterThan(2);
  });

  it('reads a fixture log as JSON lines, and a missing log as empty', async () => {
    await using log = createFixtureLog();
    expect(readFixtureLog(log.path)).toEqual([]);
    writeFileSync(log.path, '{"pid":1,"kind":"request","method":"tools/call","tool":"a"}\n');
    expect(log.toolCalls('a')).toHaveLength(1);
    expect(log.toolCalls('b')).toHaveLength(0);
  });
});
