// The order a call is checked in: explicit denies, then the arguments against the tool's inputSchema, then the
// rules' argument conditions. A misspelt argument is a schema error; a failed condition is explained.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isInterlockError } from 'mcp-interlock';
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

const filesystem = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-filesystem/dist/index.js',
);

/** The error code and message a call ends with, or its text. */
async function outcome(call: Promise<string>): Promise<string> {
  try {
    return await call;
  } catch (error) {
    if (isInterlockError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
}

export async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'interlock-docs-'));
  try {
    writeFileSync(join(dir, 'notes.txt'), 'hello');
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:fs:read_text_file', 'execute', {
      id: 'notes-only',
      when: { args: { path: { startsWith: dir } } },
    });
    capabilities.deny('mcp:fs:write_file', 'execute', { id: 'read-only' });
    await using manager = new MCPClientManager({ capabilities });
    await manager.connectServer({
      name: 'fs',
      transport: 'stdio',
      command: process.execPath,
      args: [filesystem, dir],
    });
    const read = (args: Record<string, unknown>) =>
      outcome(manager.executeTool('mcp__fs__read_text_file', args));

    return {
      // A misspelt argument name: INVALID_TOOL_INPUT (the CLI exits 2), not a denial.
      misspelt: await read({ pth: join(dir, 'notes.txt') }),
      // Valid arguments that fail the condition: the denial names the rule and what failed (the CLI exits 3).
      relative: await read({ path: 'notes.txt' }),
      allowed: await read({ path: join(dir, 'notes.txt') }),
      // An explicit deny decides first, whatever the arguments.
      denied: await outcome(manager.executeTool('mcp__fs__write_file', { pth: 'x' })),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // { misspelt: "INVALID_TOOL_INPUT: Invalid arguments for tool 'mcp__fs__read_text_file': /path: is required. ...",
  //   relative: "CAPABILITY_DENIED: ... Rule 'notes-only' allows 'execute' on 'mcp:fs:read_text_file' only when
  //     path starts with \"/tmp/interlock-docs-...\"; for this call argument 'path' is a relative path, ...",
  //   allowed: 'hello',
  //   denied: "CAPABILITY_DENIED: Permission denied: 'execute' on 'mcp:fs:write_file'. Denied by rule 'read-only' ..." }
}
