/**
 * Tool pins for a fleet (issue 16): one pin document in Redis, kept in sync with every process's `PinStore`. A
 * change approved in one process unblocks the tool in the others; a conflicting first sighting loses to the pin
 * written first.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { PinStore } from '../../src/security/pinning.js';
import { MemoryStateStore } from '../../src/state/memory.js';
import { RedisStateStore } from '../../src/state/redis.js';
import { SharedPins } from '../../src/state/shared-pins.js';
import { createFixtureLog, nodeFixture } from '../helpers/fixtures.js';
import { redisForFile, type StateWorker, startStateWorker } from '../helpers/redis.js';

const redisServer = redisForFile();
const ECHO = nodeFixture('echo').args[0] as string;
const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

describe('shared pins on Redis', () => {
  it('a change approved in one process unblocks the tool in three others, which refused it until then', async () => {
    const prefix = 'pins-approve:';
    const store = await RedisStateStore.connect({ url: redisServer.current.url, keyPrefix: prefix });
    cleanup.push(() => store.close());
    const shared = await SharedPins.open(store, { pollMs: 0 });
    cleanup.push(() => shared.close());
    const log = createFixtureLog();
    cleanup.push(() => log.close());
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:echo:*', 'execute');
    const manager = new MCPClientManager({ capabilities, pins: shared.pins });
    cleanup.push(() => manager.close());
    await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo'), env: log.env });
    // The first sighting in this process is the fleet's pin.
    await shared.flush();
    const original = shared.pins.get('echo', 'echo');
    expect(original).toMatch(/^[0-9a-f]{64}$/);

    const description = 'Echoes the text back, and also reads ~/.ssh.';
    const workers: StateWorker[] = [1, 2, 3].map(() =>
      startStateWorker('pin-worker', [redisServer.current.url, prefix, ECHO, description]),
    );
    for (const w of workers) cleanup.push(() => w.kill());
    const blocked = await Promise.all(workers.map((w) => w.line('blocked ')));
    // Each saw its server's definition change against the fleet's pin, and refused to call it.
    const hashes = new Set(blocked.map((l) => l.split(' ')[1]));
    expect(hashes.size).toBe(1);
    expect(blocked.map((l) => l.split(' ')[2])).toEqual(Array(3).fill('TOOL_DEFINITION_CHANGED'));

    // The same change here, reviewed and approved once.
    await manager.executeTool('mcp__echo__set_description', { tool: 'echo', description });
    await expect.poll(() => manager.blockedTools.length).toBe(1);
    const [change] = manager.blockedTools;
    expect(hashes.has(change?.currentHash)).toBe(true);
    expect(manager.approveToolChange('mcp__echo__echo', change?.currentHash ?? '')).toBe(true);
    await shared.flush();

    const called = await Promise.all(workers.map((w) => w.line('called ')));
    expect(called).toEqual(Array(3).fill('called after approval'));
    await Promise.all(workers.map((w) => w.done));
    const fresh = await SharedPins.open(store, { pollMs: 0 });
    cleanup.push(() => fresh.close());
    expect(fresh.pins.get('echo', 'echo')).toBe(change?.currentHash);
  });

  it('a process that starts later loads the fleet pins before it connects, and blocks a changed tool at once', async () => {
    const prefix = 'pins-late:';
    await using store = await RedisStateStore.connect({ url: redisServer.current.url, keyPrefix: prefix });
    const pinned = new PinStore();
    pinned.set('echo', 'echo', HASH_A);
    // A pin file's pins are added to the fleet's where it has none.
    const first = await SharedPins.open(store, { pollMs: 0, pins: pinned });
    cleanup.push(() => first.close());
    const late = await SharedPins.open(store, { pollMs: 0 });
    cleanup.push(() => late.close());
    expect(late.pins.get('echo', 'echo')).toBe(HASH_A);
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:echo:*', 'execute');
    await using manager = new MCPClientManager({ capabilities, pins: late.pins });
    await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
    expect(manager.blockedTools.map((t) => t.name)).toEqual(['mcp__echo__echo']);
    await expect(manager.executeTool('mcp__echo__echo', { text: 'x' })).rejects.toMatchObject({
      code: 'TOOL_DEFINITION_CHANGED',
    });
  });

  it('puts its pins back into a Redis that restarted empty', async () => {
    const prefix = 'pins-restart:';
    const store = await RedisStateStore.connect({
      url: redisServer.current.url,
      keyPrefix: prefix,
      commandTimeoutMs: 500,
    });
    cleanup.push(() => store.close());
    const errors: unknown[] = [];
    const shared = await SharedPins.open(store, { pollMs: 0, onError: (e) => errors.push(e) });
    cleanup.push(() => shared.close());
    shared.pins.set('s', 't', HASH_A);
    await shared.flush();
    await redisServer.current.stop();
    try {
      // While Redis is down, a local approval stays local and the write fails with a coded error.
      shared.pins.set('s', 'u', HASH_B);
      await expect(shared.flush()).rejects.toMatchObject({ code: 'STATE_UNAVAILABLE' });
    } finally {
      await redisServer.current.start();
    }
    await expect
      .poll(
        () =>
          shared.refresh().then(
            () => true,
            () => false,
          ),
        { timeout: 10_000 },
      )
      .toBe(true);
    const other = await RedisStateStore.connect({ url: redisServer.current.url, keyPrefix: prefix });
    cleanup.push(() => other.close());
    const fresh = await SharedPins.open(other, { pollMs: 0 });
    cleanup.push(() => fresh.close());
    expect(fresh.pins.entries().map((e) => [e.tool, e.hash])).toEqual([
      ['t', HASH_A],
      ['u', HASH_B],
    ]);
  });
});

/** Two processes' shared pins over one store (in memory: the order of their writes is up to the test). */
async function twoProcesses(): Promise<[SharedPins, SharedPins]> {
  const store = new MemoryStateStore();
  const a = await SharedPins.open(store, { pollMs: 0 });
  const b = await SharedPins.open(store, { pollMs: 0 });
  cleanup.push(
    () => a.close(),
    () => b.close(),
  );
  return [a, b];
}

describe('shared pins, first sightings', () => {
  it('two processes that first see different definitions end with the one written first', async () => {
    const [a, b] = await twoProcesses();
    const seenByB: (string | undefined)[] = [];
    b.pins.onChange((c) => {
      if (c.origin === 'shared') seenByB.push(c.hash);
    });
    a.pins.set('s', 't', HASH_A);
    b.pins.set('s', 't', HASH_B);
    await Promise.all([a.flush(), b.flush()]);
    await b.refresh();
    await a.refresh();
    expect(a.pins.get('s', 't')).toBe(HASH_A);
    expect(b.pins.get('s', 't')).toBe(HASH_A);
    // B's manager is told, and re-checks its tool against the pin that won.
    expect(seenByB).toContain(HASH_A);
  });

  it('an approval replaces the pin, and a removal removes only the pin it saw', async () => {
    const [a, b] = await twoProcesses();
    a.pins.set('s', 't', HASH_A);
    await a.flush();
    await b.refresh();
    b.pins.set('s', 't', HASH_B); // an approval: B had A's pin
    await b.flush();
    await a.refresh();
    expect(a.pins.get('s', 't')).toBe(HASH_B);
    a.pins.delete('s', 't');
    await a.flush();
    await b.refresh();
    expect(b.pins.get('s', 't')).toBeUndefined();
  });
});
