/**
 * Log messages servers send, and the level we ask for: per request in `_meta` on a 2026-07-28 server (the
 * modern fixture logs only when asked), and with `logging/setLevel` on a 2025-11-25 one (server-everything).
 * Messages reach the manager's logger and its `server_log` event.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/interop/logger.js';
import { MCPClientManager, type MCPClientManagerOptions } from '../../src/interop/manager.js';
import type { ServerLogEntry } from '../../src/interop/server-logs.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/fixtures.js';
import { EVERYTHING_BIN } from '../helpers/http-fixtures.js';

let manager: MCPClientManager | undefined;
afterEach(async () => {
  await manager?.close();
  manager = undefined;
});

function start(options: MCPClientManagerOptions = {}) {
  const lines: string[] = [];
  const log =
    (level: string) =>
    (message: string): void => {
      if (message.includes(' log')) lines.push(`${level} ${message}`);
    };
  const logger: Logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
  const entries: ServerLogEntry[] = [];
  manager = new MCPClientManager({
    capabilities: tools(),
    logger,
    ...options,
  });
  manager.on('server_log', (entry) => entries.push(entry));
  return { manager, lines, entries };
}

function tools() {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:srv:*', 'execute');
  return capabilities;
}

const modern = { name: 'srv', transport: 'stdio' as const, ...nodeFixture('modern') };

describe('server log messages on a 2026-07-28 server', () => {
  it('asks for none unless a level is set: the server stays silent', async () => {
    const { manager: m, entries } = start();
    await m.connectServer(modern);
    await expect(m.executeTool('mcp__srv__chatty', {})).resolves.toBe('said my piece');
    expect(entries).toEqual([]);
  });

  it("sends the manager's level with every call, and the messages reach the logger and the event", async () => {
    const { manager: m, entries, lines } = start({ logLevel: 'info' });
    await m.connectServer(modern);
    await m.executeTool('mcp__srv__chatty', {});
    expect(entries).toEqual([
      { server: 'srv', level: 'info', logger: 'chatter', text: '{"said":"info message"}' },
      { server: 'srv', level: 'error', logger: 'chatter', text: '{"said":"error message"}' },
    ]);
    expect(lines).toEqual([
      'info [srv log chatter] {"said":"info message"}',
      'error [srv log chatter] {"said":"error message"}',
    ]);
  });

  it("lets one call ask for another level than the manager's", async () => {
    const { manager: m, entries } = start({ logLevel: 'error' });
    await m.connectServer(modern);
    await m.callTool('mcp__srv__chatty', {}, { logLevel: 'debug' });
    expect(entries.map((e) => e.level)).toEqual(['debug', 'info', 'error']);
    entries.length = 0;
    await m.executeTool('mcp__srv__chatty', {});
    expect(entries.map((e) => e.level)).toEqual(['error']);
  });

  it('refuses a level that is not one of the eight', () => {
    expect(() => new MCPClientManager({ logLevel: 'loud' as never })).toThrow(/logLevel/);
  });
});

describe('server log messages on a 2025-11-25 server', () => {
  it('sets the level with logging/setLevel at connect, and receives what the server logs', async () => {
    const { manager: m, entries } = start({ logLevel: 'debug' });
    await m.connectServer({
      name: 'srv',
      transport: 'stdio',
      command: process.execPath,
      args: [EVERYTHING_BIN, 'stdio'],
    });
    const seen = new Promise<ServerLogEntry>((resolve) => m.on('server_log', resolve));
    await m.executeTool('mcp__srv__toggle-simulated-logging', {});
    const first = await seen;
    expect(first.server).toBe('srv');
    expect(entries.length).toBeGreaterThan(0);
    await m.executeTool('mcp__srv__toggle-simulated-logging', {});
  });
});
