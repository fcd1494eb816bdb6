// Branch on `code`, not on the class: codes are stable, and work across copies of the package.
import { ErrorCode, isInterlockError, PermissionDeniedError, ToolNotFoundError } from 'mcp-interlock';
import { MCPClientManager } from 'mcp-interlock/interop';

export async function main() {
  await using manager = new MCPClientManager(); // no capabilities granted: every call is denied
  manager.registerTools('fs', [
    { name: 'read_file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } },
  ]);

  const seen: string[] = [];
  for (const name of ['mcp__fs__read_fil', 'mcp__fs__read_file']) {
    try {
      await manager.executeTool(name, { path: 'README.md' });
    } catch (error) {
      if (!isInterlockError(error)) throw error; // not ours: a bug, let it surface
      if (error.code === ErrorCode.TOOL_NOT_FOUND && error instanceof ToolNotFoundError) {
        seen.push(`${error.code}: did you mean ${error.suggestions.join(', ')}?`);
      } else if (error.code === ErrorCode.CAPABILITY_DENIED && error instanceof PermissionDeniedError) {
        seen.push(`${error.code}: grant '${error.action}' on '${error.resource}' to allow it`);
      } else {
        seen.push(`${error.code}: ${error.message}`);
      }
    }
  }
  return seen;
  // [ "TOOL_NOT_FOUND: did you mean mcp__fs__read_file?",
  //   "CAPABILITY_DENIED: grant 'execute' on 'mcp:fs:read_file' to allow it" ]
}
