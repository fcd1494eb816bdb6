// Short-lived credentials from a command (a vault CLI, a cloud SDK), fetched again when the server answers 401.
import type { MCPServerConfigInput } from 'mcp-interlock/interop';

export const server: MCPServerConfigInput = {
  name: 'internal',
  transport: 'http',
  url: 'https://mcp.internal.example/mcp',
  // Static headers: `${VAR}` values are expanded from the environment when loaded from mcp.json.
  headers: { 'X-Team': 'payments' },
  // Prints {"Authorization": "Bearer ..."} on stdout. Run without a shell; its output is never logged.
  headersHelper: { command: 'vault-token', args: ['--audience', 'mcp-internal', '--format', 'headers-json'] },
};
