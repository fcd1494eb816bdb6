// A server that crashes comes back by itself: the manager reconnects with backoff, lists the tools again
// (re-checking their pins), and the wrappers handed out before keep working.
import { createRequire } from 'node:module';
import type { ServerHealth } from 'mcp-interlock/interop';
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

const everything = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

export async function main() {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:everything:echo', 'execute');
  await using manager = new MCPClientManager({ capabilities });

  const events: string[] = [];
  manager.on('disconnected', (e) => events.push(`disconnected (${e.reason})`));
  manager.on('reconnecting', (e) => events.push(`reconnecting: attempt ${e.attempt}`));
  manager.on('reconnected', (e) => events.push(`reconnected with ${e.tools} tools`));

  await manager.connectServer({
    name: 'everything',
    transport: 'stdio',
    command: process.execPath,
    args: [everything, 'stdio'],
    timeoutMs: 10_000, // per request
    reconnect: { maxAttempts: 10, initialDelayMs: 100, maxDelayMs: 5_000 }, // full jitter by default
  });
  const echo = manager.getTool('mcp__everything__echo');

  const back = new Promise((resolve) => manager.once('reconnected', resolve));
  process.kill(manager.getConnection('everything')?.pid as number, 'SIGKILL'); // a crash
  await back;

  const reply = await echo?.execute({ message: 'still here' }); // the same wrapper as before the crash
  const health: ServerHealth | undefined = manager.health().everything;
  return { events: [...events], reply, state: health?.state, reconnects: health?.reconnects };
  // events: ['disconnected (lost)', 'reconnecting: attempt 1', 'reconnected with 13 tools'], reconnects: 1
}
