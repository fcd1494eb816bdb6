// Interactive sign-in for a CLI: the browser opens, the redirect comes back to a loopback port, tokens are kept
// in a 0600 file and refreshed on later runs.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createServerAuth, FileTokenStore, openBrowser } from 'mcp-interlock/auth';
import { MCPClientManager } from 'mcp-interlock/interop';
import type { NetworkPolicy } from 'mcp-interlock/net';
import { CapabilitySet } from 'mcp-interlock/security';

export interface SignInOptions {
  url: string;
  tokenFile?: string;
  /** How to show the sign-in page. @default openBrowser (prints the URL too) */
  openUrl?: (url: URL) => void | Promise<void>;
  network?: NetworkPolicy;
}

export async function main(options: SignInOptions) {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:docs:whoami', 'execute');
  await using manager = new MCPClientManager({
    capabilities,
    network: options.network,
    serverAuth: createServerAuth({
      store: new FileTokenStore(options.tokenFile ?? join(homedir(), '.interlock', 'tokens.json')),
      openUrl: options.openUrl ?? ((url) => openBrowser(url)),
    }),
  });
  // No client id: the client registers itself (RFC 7591) unless the server takes client ID metadata documents.
  await manager.connectServer({ name: 'docs', transport: 'http', url: options.url, auth: { type: 'oauth' } });
  return await manager.executeTool('mcp__docs__whoami', {});
}
