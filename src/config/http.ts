/**
 * Config to HTTP (issue 15): a config file's `http` section and a server's `tls` / `proxy` as options of the
 * HTTP stack in `src/net`, certificate files read when asked. The client itself is built by `httpClientFrom`, as an
 * engine's and a manager's are.
 */
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../errors.js';
import {
  type HttpClient,
  type HttpOptions,
  type HttpProxyOption,
  type HttpTlsOptions,
  httpClientFrom,
  type ServerHttpOverrides,
} from '../net/http.js';
import type { NetworkPolicy } from '../net/network.js';
import type { HttpConfig, NetworkConfig, ServerProxyConfig, ServerTlsConfig } from './servers.js';

/**
 * TLS settings as written in a config (PEM text or files) as dispatcher TLS options, files read now (relative paths
 * start at the working directory). Throws `ConfigError` naming `where`, the field and the path, never contents.
 */
export async function readTlsConfig(tls: ServerTlsConfig, where: string): Promise<HttpTlsOptions> {
  const read = async (field: string, file: string): Promise<Buffer> => {
    try {
      return await readFile(file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      throw new ConfigError(
        `${where}: tls.${field} '${file}' could not be read (${code}). Fix the path or the file's permissions.`,
        { issues: [{ path: `tls.${field}`, message: `cannot read '${file}' (${code})` }], cause: err },
      );
    }
  };
  const list = (v: string | readonly string[] | undefined) =>
    v === undefined ? [] : typeof v === 'string' ? [v] : v;
  const ca = [...list(tls.ca), ...(await Promise.all(list(tls.caFile).map((f) => read('caFile', f))))];
  const cert = tls.cert ?? (tls.certFile === undefined ? undefined : await read('certFile', tls.certFile));
  const key = tls.key ?? (tls.keyFile === undefined ? undefined : await read('keyFile', tls.keyFile));
  return {
    ...(ca.length > 0 ? { ca } : {}),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
    ...(tls.passphrase === undefined ? {} : { passphrase: tls.passphrase }),
  };
}

function proxyOption(proxy: HttpConfig['proxy']): HttpProxyOption | undefined {
  if (proxy === undefined || typeof proxy === 'object') return proxy;
  if (proxy === 'env' || proxy === 'none') return proxy;
  // One proxy URL is used for every target, whatever NO_PROXY says.
  return { http: proxy, https: proxy, noProxy: '' };
}

/** A config file's `http` section as {@link HttpOptions}, certificate files read now. */
export async function httpOptionsFromConfig(
  config: HttpConfig | undefined,
): Promise<HttpOptions | undefined> {
  if (config === undefined) return undefined;
  return {
    proxy: proxyOption(config.proxy),
    proxyTarget: config.proxyTarget,
    tls: config.tls === undefined ? undefined : await readTlsConfig(config.tls, 'The http settings'),
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    connections: config.connections,
  };
}

/**
 * A server config's `tls` and `proxy` as dispatcher overrides, with `caFile`, `certFile` and `keyFile` read now.
 * Throws `ConfigError` naming the server, the field and the path, never the contents.
 */
export async function serverHttpOverrides(config: {
  name: string;
  tls?: ServerTlsConfig | undefined;
  proxy?: ServerProxyConfig | undefined;
}): Promise<ServerHttpOverrides | undefined> {
  const { tls, proxy } = config;
  if (tls === undefined && proxy === undefined) return undefined;
  return {
    tls: tls === undefined ? undefined : await readTlsConfig(tls, `Server '${config.name}'`),
    proxy: proxyOption(proxy),
  };
}

/** The HTTP settings of a config: its `network` policy and its `http` section. */
export interface HttpSettingsConfig {
  network?: NetworkConfig | undefined;
  http?: HttpConfig | undefined;
}

/**
 * A config's `network` and `http` as the options `createHttpClient`, an `Engine` and a manager take, certificate
 * files read now: the one place a config becomes HTTP settings.
 */
export async function httpSettingsFromConfig(
  config: HttpSettingsConfig,
): Promise<{ network: NetworkPolicy | undefined; http: HttpOptions | undefined }> {
  return { network: config.network, http: await httpOptionsFromConfig(config.http) };
}

/**
 * The HTTP stack a config describes, built the way an engine and a manager build theirs (`httpClientFrom`); the
 * CLI's revocation requests use it, and the caller closes it.
 */
export async function createHttpClientFromConfig(config: HttpSettingsConfig): Promise<HttpClient> {
  return httpClientFrom(await httpSettingsFromConfig(config)).client;
}
