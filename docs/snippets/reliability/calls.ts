// Calls never hang: a per-request timeout that progress notifications reset, a total cap, and an
// AbortSignal that cancels the call and tells the server (notifications/cancelled).
import { createRequire } from 'node:module';
import { isInterlockError } from 'mcp-interlock';
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

const everything = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);
const LONG = 'mcp__everything__trigger-long-running-operation';

export async function main() {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:everything:trigger-long-running-operation', 'execute');
  await using manager = new MCPClientManager({ capabilities });
  await manager.connectServer({
    name: 'everything',
    transport: 'stdio',
    command: process.execPath,
    args: [everything, 'stdio'],
    timeoutMs: 1_500, // less than the whole operation, more than one step: progress keeps it alive
  });

  // 2 seconds in 4 steps: each progress notification resets the 1.5 s timeout.
  const steps: number[] = [];
  const done = await manager.executeTool(
    LONG,
    { duration: 2, steps: 4 },
    { onProgress: (p) => steps.push(p.progress) },
  );

  // The same call with a 1 s total cap fails with REQUEST_TIMEOUT whatever the progress.
  const capped = await manager
    .executeTool(LONG, { duration: 2, steps: 4 }, { maxTotalTimeoutMs: 1_000 })
    .catch((err: unknown) => (isInterlockError(err) ? err.code : 'unexpected'));

  // Cancelling: the promise rejects with REQUEST_CANCELLED at once.
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 200);
  const cancelled = await manager
    .executeTool(LONG, { duration: 5, steps: 5 }, { signal: controller.signal })
    .catch((err: unknown) => (isInterlockError(err) ? err.code : 'unexpected'));

  return { done, steps, capped, cancelled };
  // { done: 'Long running operation completed. ...', steps: [1, 2, 3, 4], capped: 'REQUEST_TIMEOUT',
  //   cancelled: 'REQUEST_CANCELLED' }
}
