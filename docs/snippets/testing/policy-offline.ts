// Check a capability policy offline: every call passes the same gate and validation as a live one,
// and stops at NOT_CONNECTED only after both have passed.
import { isInterlockError } from 'mcp-interlock';
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

const inputSchema = {
  type: 'object',
  properties: { owner: { type: 'string' }, repo: { type: 'string' }, number: { type: 'integer' } },
  required: ['owner', 'repo'],
};

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
  capabilities.grant('mcp:github:get_issue', 'execute');

  await using manager = new MCPClientManager({ capabilities });
  manager.registerTools('github', [
    { name: 'get_issue', inputSchema },
    { name: 'delete_repository', inputSchema },
  ]);

  return {
    // Not granted: denied before validation, whatever the arguments.
    deleteRepository: await outcome(
      manager.executeTool('mcp__github__delete_repository', { owner: 'o', repo: 'r' }),
    ),
    // Granted, but the arguments do not match the schema.
    badArguments: await outcome(manager.executeTool('mcp__github__get_issue', { owner: 'o' })),
    // Granted and valid: the call would now go to the server, which is not there.
    allowed: await outcome(
      manager.executeTool('mcp__github__get_issue', { owner: 'o', repo: 'r', number: 1 }),
    ),
  }; // { deleteRepository: 'CAPABILITY_DENIED', badArguments: 'INVALID_TOOL_INPUT', allowed: 'NOT_CONNECTED' }
}
