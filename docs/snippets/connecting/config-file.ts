// Reuse the MCP config file you already have (Claude Desktop, Cursor, `.mcp.json`, VS Code's `mcp.json`).
import { fileURLToPath } from 'node:url';
import type { ConfigError } from 'mcp-interlock';
import { loadMCPConfig } from 'mcp-interlock/config';
import { MCPClientManager } from 'mcp-interlock/interop';

const file = fileURLToPath(new URL('./mcp.json', import.meta.url));

export async function main() {
  // Every ${VAR} must be set, even in a disabled server; the error names the field that needs it.
  const missing = await loadMCPConfig(file, { env: {} }).catch((error: ConfigError) => error.issues);

  // `env` defaults to process.env; it is passed here so the example does not depend on your shell.
  const configs = await loadMCPConfig(file, { env: { ...process.env, GITHUB_TOKEN: 'example-token' } });

  await using manager = new MCPClientManager();
  const connected = await manager.connectAll(configs); // in parallel; disabled servers are skipped
  return {
    missing, // [{ path: 'mcpServers.github.headers.Authorization', message: "environment variable ..." }]
    servers: configs.map((config) => `${config.name}: ${config.transport}`), // ['everything: stdio', 'github: http']
    connected, // { everything: true, github: false }
  };
}
