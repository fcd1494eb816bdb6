// Per-call timeouts and cancellation, and the events that report them.
import { createRequire } from 'node:module';
import { isInterlockError } from 'mcp-interlock';
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

const everything = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

/** The error code a call ends with, or 'ok'. */
async function outcome(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return 'ok';
  } catch (error) {
    if (isInterlockError(error)) return error.code;
    throw error;
  }
}

export async function main() {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:everything:trigger-long-running-operation', 'execute');

  await using manager = new MCPClientManager({ capabilities });
  const events: string[] = [];
  manager.on('connected', ({ server, transport }) => events.push(`connected: ${server} over ${transport}`));
  manager.on('tool_call_failed', ({ tool, code }) => events.push(`failed: ${tool} with ${code}`));
  await manager.connectServer({
    name: 'everything',
    transport: 'stdio',
    command: process.execPath,
    args: [everything, 'stdio'],
  });

  const slow = 'mcp__everything__trigger-long-running-operation';
  const tenSeconds = { duration: 10, steps: 10 };

  // A deadline for this call only; the server's own `timeoutMs` applies otherwise.
  const timedOut = await outcome(manager.executeTool(slow, tenSeconds, { timeoutMs: 300 }));

  // Cancel from outside, e.g. when the user stops the agent.
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 300);
  const cancelled = await outcome(manager.executeTool(slow, tenSeconds, { signal: controller.signal }));

  return { timedOut, cancelled, events };
  // { timedOut: 'REQUEST_TIMEOUT', cancelled: 'REQUEST_CANCELLED', events: [
  //   'connected: everything over stdio',
  //   'failed: trigger-long-running-operation with REQUEST_TIMEOUT',
  //   'failed: trigger-long-running-operation with REQUEST_CANCELLED' ] }
}
