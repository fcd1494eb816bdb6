// One shared HTTP stack for every remote server: a corporate proxy, a private CA and a client certificate (mTLS).
import { readFile } from 'node:fs/promises';
import { MCPClientManager } from '../../../src/interop/index.js';
import { CapabilitySet } from '../../../src/security/index.js';

export interface Options {
  /** The MCP server. */
  url: string;
  /** @default HTTP_PROXY / HTTPS_PROXY / NO_PROXY from the environment */
  proxy?: string;
  /** PEM files; all optional. */
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

export async function main(options: Options) {
  const read = (file: string | undefined) => (file === undefined ? undefined : readFile(file, 'utf8'));
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:remote:*', 'execute');
  await using manager = new MCPClientManager({
    capabilities,
    http: {
      proxy: options.proxy === undefined ? 'env' : { http: options.proxy, https: options.proxy },
      tls: {
        ca: await read(options.caFile),
        cert: await read(options.certFile),
        key: await read(options.keyFile),
      },
    },
    // This example talks to servers on this machine; production setups keep the default-deny policy.
    network: { allowHosts: [new URL(options.url).hostname] },
  });
  await manager.connectServer({ name: 'remote', transport: 'http', url: options.url });
  return manager.tools.map((t) => t.name).sort();
}
