// Cross-app access: the user's ID token from the company's identity provider becomes an ID-JAG there (RFC 8693),
// which the MCP server's authorization server redeems for an access token (RFC 7523). No browser, no consent screen.
import { createServerAuth } from 'mcp-interlock/auth';
import { MCPClientManager } from 'mcp-interlock/interop';
import type { NetworkPolicy } from 'mcp-interlock/net';
import { CapabilitySet } from 'mcp-interlock/security';

export async function main(
  url: string,
  idp: { tokenEndpoint: string; idToken: () => Promise<string> },
  network?: NetworkPolicy,
) {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:wiki:*', 'execute');
  await using manager = new MCPClientManager({
    capabilities,
    network,
    // Asked each time a grant is needed: hand over the ID token your app got at single sign-on.
    serverAuth: createServerAuth({ idToken: () => idp.idToken() }),
  });
  await manager.connectServer({
    name: 'wiki',
    transport: 'http',
    url,
    auth: {
      type: 'oauth',
      grant: 'cross_app_access',
      // This app's client at the wiki's authorization server, and only there.
      clientId: 'chat-app',
      clientSecret: process.env.WIKI_CLIENT_SECRET ?? 'chat-secret',
      idp: { tokenEndpoint: idp.tokenEndpoint, clientId: 'chat-at-idp' },
    },
  });
  return await manager.executeTool('mcp__wiki__whoami', {});
}
