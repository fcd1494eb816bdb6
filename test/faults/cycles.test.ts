/** 300 connect / call / disconnect cycles leave no file descriptors, processes, listeners or warnings behind. */
import { afterAll, describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/fixtures.js';
import { descendantPids, openFdCount } from '../helpers/processes.js';

const CYCLES = 300;

describe('connect / call / disconnect cycles', () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  afterAll(() => {
    process.off('warning', onWarning);
  });

  it(`runs ${CYCLES} cycles with no growth in fds, child processes or listeners`, {
    timeout: 240_000,
  }, async () => {
    const capabilities = CapabilitySet.allowAll({ onWarning: () => {} });
    const manager = new MCPClientManager({ capabilities });
    const config = { name: 'cycle', transport: 'stdio' as const, ...nodeFixture('faulty') };
    const listenerBaseline = () =>
      process.listenerCount('exit') + process.listenerCount('SIGINT') + process.listenerCount('SIGTERM');

    // Warm up: the first cycle installs the one-time exit hook and loads modules.
    await manager.connectServer(config);
    await manager.executeTool('mcp__cycle__echo', { text: 'warm' });
    await manager.disconnectServer('cycle');
    const fds = openFdCount();
    const listeners = listenerBaseline();

    for (let i = 0; i < CYCLES; i++) {
      await manager.connectServer(config);
      await expect(manager.executeTool('mcp__cycle__echo', { text: `n${i}` })).resolves.toBe(`n${i}`);
      await manager.disconnectServer('cycle');
    }
    await manager.close();

    expect(descendantPids(process.pid)).toEqual([]);
    // A few fds may be in flux (pipes being closed); a leak would be hundreds.
    expect(openFdCount()).toBeLessThanOrEqual(fds + 5);
    expect(listenerBaseline()).toBe(listeners);
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });
});
