/**
 * What `login`, `login --status` and `logout` share: which servers they act on, how an expiry reads, and how
 * revocation requests are sent.
 */
import type { RevokeTokensOptions } from '../../auth/sign-in-state.js';
import { createHttpClientFromConfig, serverHttpOverrides } from '../../config/http.js';
import type { InterlockConfig } from '../../config/load.js';
import type { MCPServerConfig, OAuthConfig, StdioServerConfig } from '../../config/servers.js';
import { UsageError } from '../exit.js';

/** Names of the tokens in messages. */
export const TOKEN_NAMES = { refresh_token: 'refresh token', access_token: 'access token' } as const;

/** Builds the options of revocation requests per server; `close()` releases the HTTP stack. */
export interface Revoker extends AsyncDisposable {
  optionsFor(server: AuthServerConfig): RevokeTokensOptions;
  close(): Promise<void>;
}

/**
 * The project's HTTP stack, as the manager has it: its SSRF guard, proxy and certificates apply to revocation
 * requests too, and a server's own `tls` / `proxy` to the requests made for it, as at sign-in. The client
 * authenticates as at the token endpoint.
 */
export async function createRevoker(
  config: Pick<InterlockConfig, 'network' | 'http'>,
  signal: AbortSignal | undefined,
): Promise<Revoker> {
  const client = await createHttpClientFromConfig(config);
  const close = () => client.close();
  return {
    optionsFor: (server) => ({
      // The client as configured (the stored registration wins in revokeTokens); the grant and scope are not used.
      ...server.auth,
      fetch: async (url, init) => client.fetchFor(await serverHttpOverrides(server))(url, init),
      signal,
    }),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** A remote server with an `auth` section: one the CLI signs in to. */
export type AuthServerConfig = Exclude<MCPServerConfig, StdioServerConfig> & { auth: OAuthConfig };

function hasAuth(config: MCPServerConfig): config is AuthServerConfig {
  return config.transport !== 'stdio' && config.auth?.type === 'oauth';
}

/**
 * The servers a command acts on: the named ones (each must exist and have `auth`; for `login` it must be
 * enabled too), or without names every server with `auth` (for `login` only the enabled ones).
 * Throws `UsageError` (exit 2) saying what to change.
 */
export function authServers(
  config: Pick<InterlockConfig, 'file' | 'servers'>,
  names: readonly string[],
  purpose: 'login' | 'logout' | 'status',
): AuthServerConfig[] {
  if (names.length === 0) {
    return config.servers.filter(hasAuth).filter((s) => purpose !== 'login' || s.enabled);
  }
  const unknown = names.filter((n) => !config.servers.some((s) => s.name === n));
  if (unknown.length > 0) {
    const known = config.servers.map((s) => s.name).join(', ');
    throw new UsageError(`No server named '${unknown.join("', '")}' in ${config.file}. Servers: ${known}.`);
  }
  const out: AuthServerConfig[] = [];
  for (const name of new Set(names)) {
    const server = config.servers.find((s) => s.name === name) as MCPServerConfig;
    if (server.transport === 'stdio') {
      throw new UsageError(
        `Server '${name}' runs over stdio: only remote servers (http, sse, auto) with an 'auth' section sign in with OAuth.`,
      );
    }
    if (!hasAuth(server)) {
      throw new UsageError(
        `Server '${name}' in ${config.file} has no 'auth' section: add 'auth: { type: oauth }' to it (for machine to machine: grant: client_credentials, clientId and clientSecret) to sign in with OAuth.`,
      );
    }
    if (purpose === 'login' && !server.enabled) {
      throw new UsageError(`Server '${name}' is disabled in ${config.file}; enable it to sign in.`);
    }
    out.push(server);
  }
  return out;
}

/** `in 59 min`, `in 3 h`, `in 2 d`, or `expired 5 min ago`. */
export function describeExpiry(expiresAt: number, now: number = Date.now()): string {
  const ms = Math.abs(expiresAt - now);
  const minutes = Math.round(ms / 60_000);
  const span =
    minutes < 1
      ? 'less than a minute'
      : minutes < 120
        ? `${minutes} min`
        : minutes < 48 * 60
          ? `${Math.round(minutes / 60)} h`
          : `${Math.round(minutes / 1440)} d`;
  return expiresAt > now ? `in ${span}` : `expired ${span} ago`;
}
