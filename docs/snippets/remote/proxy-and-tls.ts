// A corporate proxy for every remote server, and one server behind a private CA that wants a client certificate.
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

export interface Options {
  /** The MCP server. */
  url: string;
  /** @default HTTP_PROXY / HTTPS_PROXY / NO_PROXY from the environment */
  proxy?: string;
  /** PEM files of the server's private CA and of our client certificate; all optional. */
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

export async function main(options: Options) {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:remote:*', 'execute');
  await using manager = new MCPClientManager({
    capabilities,
    // Shared by every server of this manager: the proxy (and a CA every server needs, if any: http.tls).
    http: { proxy: options.proxy === undefined ? 'env' : { http: options.proxy, https: options.proxy } },
    // This example talks to servers on this machine; production setups keep the default-deny policy.
    network: { allowHosts: [new URL(options.url).hostname] },
  });
  const { caFile, certFile, keyFile } = options;
  await manager.connectServer({
    name: 'remote',
    transport: 'http',
    url: options.url,
    // This server's own TLS: its CA adds to the shared ones; the files are read at connect time.
    ...(caFile === undefined && certFile === undefined ? {} : { tls: { caFile, certFile, keyFile } }),
  });
  return manager.tools.map((t) => t.name).sort();
}
