// The SSRF guard: refuse servers, redirects and OAuth endpoints that resolve to private or metadata addresses.
import { MCPClientManager } from 'mcp-interlock/interop';
import { NetworkPolicyError } from 'mcp-interlock/net';
import { CapabilitySet } from 'mcp-interlock/security';

export async function main() {
  await using manager = new MCPClientManager({
    capabilities: new CapabilitySet(),
    // Refuse loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7), CGNAT and link-local addresses,
    // except the internal gateway, which is trusted by name.
    network: { allowPrivate: false, allowHosts: ['mcp-gateway.internal'], denyHosts: ['*.corp.example'] },
  });
  try {
    // The cloud metadata service: refused before any socket opens.
    await manager.connectServer({
      name: 'metadata',
      transport: 'http',
      url: 'http://169.254.169.254/latest/meta-data/',
      reconnect: { enabled: false },
    });
    return { refused: false };
  } catch (err) {
    let cause: unknown = err;
    while (cause instanceof Error && !(cause instanceof NetworkPolicyError)) cause = cause.cause;
    return {
      refused: true,
      code: (err as { code?: string }).code, // 'CONNECTION_FAILED'
      reason: cause instanceof NetworkPolicyError ? cause.reason : undefined, // 'link-local'
    };
  }
}
