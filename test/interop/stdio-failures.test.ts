/**
 * Issue 18, item 6: a stdio server that dies while connecting is reported by its exit and the stderr line that
 * names the problem, not by the EPIPE or "Connection closed" its death caused.
 */
import { describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';

/** The error a connect to `node ...args` fails with (no reconnect). */
async function connectError(name: string, args: string[]): Promise<Error> {
  await using manager = new MCPClientManager({ capabilities: new CapabilitySet() });
  return await manager
    .connectServer({
      name,
      transport: 'stdio',
      command: process.execPath,
      args,
      reconnect: { enabled: false },
    })
    .then(
      () => new Error('connected'),
      (e: unknown) => e as Error,
    );
}

describe('a stdio server that fails to start', () => {
  it('says "the server exited with code 1: Error: Cannot find module ..." first', async () => {
    const err = await connectError('missing', ['./no-such-file.js']);
    const [first] = err.message.split('\n');
    expect(first).toMatch(
      /failed to connect: the server exited with code 1: Error: Cannot find module '.*no-such-file\.js'/,
    );
    expect(first).not.toMatch(/EPIPE|Connection closed/);
    // The tail is still there for the rest of the story.
    expect(err.message).toContain('Last stderr lines:');
  });

  it("names a missing package by Node's error line, not by the source line it prints above it", async () => {
    const err = await connectError('missing-package', [
      '--input-type=module',
      '-e',
      "import 'no-such-package-for-interlock-tests';",
    ]);
    const [first] = err.message.split('\n');
    expect(first).toMatch(
      /the server exited with code 1: Error \[ERR_MODULE_NOT_FOUND\]: Cannot find package 'no-such-package-for-interlock-tests'/,
    );
    expect(first).not.toContain('throw new');
  });

  it('keeps the protocol error when the server dies without saying why', async () => {
    const err = await connectError('quiet', ['-e', 'process.exit(3)']);
    expect(err.message).toMatch(/exited with code 3/);
  });
});
