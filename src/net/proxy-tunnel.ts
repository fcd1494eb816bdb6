/**
 * Proxy tunnels to a checked address (issue 9, SSRF through a proxy): with `http.proxyTarget: 'address'` the target
 * name is resolved and checked here, and the `CONNECT` request names the address that passed, so the proxy has
 * nothing left to resolve and a name that changes its answer between two lookups (DNS rebinding) cannot move the
 * connection elsewhere. TLS to the target still verifies the certificate against the name.
 *
 * undici's own proxy agents always send the name (and fix the TLS server name per agent), so this is a connector
 * for a plain `Agent`: it routes each new connection by `NO_PROXY`, opens the tunnel with an undici `Client`, and
 * wraps it in TLS with undici's connector.
 */
import { createRequire } from 'node:module';
import { isIP, type Socket } from 'node:net';
import type { buildConnector } from 'undici';
import { ConnectionError } from '../errors.js';
import type { NetworkGuard } from './network.js';

/** Which proxy serves which target, from explicit settings or the environment. */
export interface ProxyRoutes {
  http?: string | undefined;
  https?: string | undefined;
  /** `NO_PROXY` syntax: `host`, `.suffix` or `*.suffix`, optional `:port`, `*` for every host. */
  noProxy?: string | undefined;
}

interface NoProxyEntry {
  host: string;
  port: number;
}

function parseNoProxy(value: string): NoProxyEntry[] | 'all' {
  if (value.trim() === '*') return 'all';
  const out: NoProxyEntry[] = [];
  for (const raw of value.split(/[,\s]+/)) {
    if (raw === '') continue;
    const withPort = /^(.+):(\d+)$/.exec(raw);
    const host = (withPort?.[1] ?? raw).replace(/^\*?\./, '').toLowerCase();
    out.push({ host: host.replace(/^\[(.*)\]$/, '$1'), port: withPort ? Number(withPort[2]) : 0 });
  }
  return out;
}

/** The proxy URL for a target, or `undefined` to connect directly. */
export function proxyFor(
  routes: ProxyRoutes,
  protocol: string,
  hostname: string,
  port: number,
): string | undefined {
  // As undici's EnvHttpProxyAgent: an https target without a (non-empty) https proxy goes through the http one.
  const proxy = protocol === 'https:' ? routes.https || routes.http : routes.http;
  if (proxy === undefined || proxy === '') return undefined;
  const entries = parseNoProxy(routes.noProxy ?? '');
  if (entries === 'all') return undefined;
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  for (const e of entries) {
    if (e.port !== 0 && e.port !== port) continue;
    if (host === e.host || host.endsWith(`.${e.host}`)) return undefined;
  }
  return proxy;
}

/** The proxy settings of the environment, as undici's `EnvHttpProxyAgent` reads them. */
export function envProxyRoutes(env: NodeJS.ProcessEnv = process.env): ProxyRoutes {
  // An https target without HTTPS_PROXY goes through HTTP_PROXY: `proxyFor` falls back, as undici does.
  return {
    http: env.http_proxy ?? env.HTTP_PROXY,
    https: env.https_proxy ?? env.HTTPS_PROXY,
    noProxy: env.no_proxy ?? env.NO_PROXY ?? '',
  };
}

function proxyAuthorization(proxy: URL): Record<string, string> {
  if (proxy.username === '' && proxy.password === '') return {};
  const user = decodeURIComponent(proxy.username);
  const password = decodeURIComponent(proxy.password);
  return { 'proxy-authorization': `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
}

/**
 * A connector that tunnels through the routed proxy to the checked address of the target, and connects directly
 * (with `direct`) where no proxy applies.
 */
export function tunnelingConnector(
  guard: NetworkGuard,
  routes: ProxyRoutes,
  tls: Record<string, unknown>,
  direct: buildConnector.connector,
): buildConnector.connector {
  // undici is loaded here, when a tunnel is first set up, not at import (issue 15, import time).
  const { buildConnector, Client } = createRequire(import.meta.url)('undici') as typeof import('undici');
  const endpoint = buildConnector({ ...tls } as buildConnector.BuildOptions);
  return (opts, callback) => {
    const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
    const proxy = proxyFor(routes, opts.protocol, opts.hostname, port);
    if (proxy === undefined) {
      direct(opts, callback);
      return;
    }
    const tunnel = async () => {
      guard.checkHost(opts.hostname);
      const host = opts.hostname.replace(/^\[(.*)\]$/, '$1');
      const address = isIP(host) !== 0 ? host : (await guard.resolveChecked(host))[0]?.address;
      if (address === undefined) throw new ConnectionError(`Host '${host}' did not resolve to any address.`);
      const target = `${address.includes(':') ? `[${address}]` : address}:${port}`;
      const proxyUrl = new URL(proxy);
      // One client per tunnel: the CONNECT socket is handed over to us, and the client is closed at once.
      const client = new Client(proxyUrl.origin);
      try {
        const { socket, statusCode } = await client.connect({
          path: target,
          headers: { host: target, ...proxyAuthorization(proxyUrl) },
        });
        if (statusCode !== 200) {
          socket.destroy();
          throw new ConnectionError(
            `The proxy ${proxyUrl.origin} answered ${statusCode} to CONNECT ${target} (for '${host}').`,
          );
        }
        // undici types the upgraded stream as a Duplex; it is the proxy connection's net.Socket.
        return socket as Socket;
      } finally {
        void client.close().catch(() => {});
      }
    };
    tunnel().then(
      (socket) => {
        if (opts.protocol !== 'https:') {
          callback(null, socket);
          return;
        }
        // The certificate is checked against the name, not the address the tunnel goes to (an IP literal
        // target is checked against itself: TLS sends no server name for it).
        const name = opts.hostname.replace(/^\[(.*)\]$/, '$1');
        const servername = opts.servername || (isIP(name) === 0 ? name : undefined);
        endpoint({ ...opts, servername, httpSocket: socket }, callback);
      },
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), null),
    );
  };
}
