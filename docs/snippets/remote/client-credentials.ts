// Machine to machine: the OAuth client credentials grant, the token requested for this server only (RFC 8707).
import { createServerAuth } from 'mcp-interlock/auth';
import { MCPClientManager } from 'mcp-interlock/interop';
import type { NetworkPolicy } from 'mcp-interlock/net';
import { CapabilitySet } from 'mcp-interlock/security';

export async function main(url: string, network?: NetworkPolicy) {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:billing:*', 'execute');
  await using manager = new MCPClientManager({
    capabilities,
    network,
    // Discovery (RFC 9728, RFC 8414), the token request and refreshes all run through the SDK's auth().
    serverAuth: createServerAuth(),
  });
  await manager.connectServer({
    name: 'billing',
    transport: 'http',
    url,
    auth: {
      type: 'oauth',
      grant: 'client_credentials',
      clientId: 'billing-agent',
      // In mcp.json write "${BILLING_CLIENT_SECRET}": values are expanded from the environment.
      clientSecret: process.env.BILLING_CLIENT_SECRET ?? 'dev-secret',
      tokenEndpointAuthMethod: 'client_secret_basic',
    },
  });
  return await manager.executeTool('mcp__billing__whoami', {});
}
