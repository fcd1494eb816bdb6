/**
 * Opens a client for a server config: builds its transport (protocol/transport.ts), negotiates the era, runs the
 * auth flow, and with `auto` tries Streamable HTTP and falls back to the 2024-11-05 HTTP+SSE transport when the
 * server answers the initialize POST with a 4xx, as the MCP spec (2025-03-26, "Backwards compatibility") describes.
 */

import type { FetchLike, OAuthClientProvider, Transport } from '@modelcontextprotocol/client';
import {
  type Client,
  type PriorDiscovery,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import type { HttpServerConfig, MCPServerConfig } from '../config/servers.js';
import { AuthError, ConfigError } from '../errors.js';
import { MAX_INPUT_REQUESTS_PER_ROUND, MAX_INPUT_ROUNDS } from '../protocol/bounds.js';
import { InterlockClient } from '../protocol/client.js';
import { MessageTooLargeError, ProcessStdioTransport } from '../protocol/stdio-transport.js';
import { type ClientIdentity, createTransport, type StderrListener } from '../protocol/transport.js';
import { authFailureOf } from './request-errors.js';
import { httpStatusOf, probeClosedTransport } from './sdk-errors.js';
import { installServerLogs, type ServerLogSupport } from './server-logs.js';
import type { ServerRequestSupport } from './server-requests.js';

/**
 * How one HTTP server authenticates (issue 9). Built by the auth area (`createServerAuth`); interop only sees this
 * small interface.
 */
export interface ServerAuth {
  /** Runs before the transport is built (e.g. starts a redirect receiver). */
  prepare?: (() => Promise<void>) | undefined;
  /** Releases what `prepare` started; called once the connect attempt settled. */
  close?: (() => Promise<void>) | undefined;
  /**
   * Releases what the auth holds for the life of the connection it was made for (a `token_exchange` server's
   * per-caller sessions, each closed with an HTTP DELETE); called once, when that connection's client closes.
   */
  release?: (() => Promise<void>) | undefined;
  /** The SDK's OAuth provider: discovery, registration, PKCE, refresh and step-up run through it. */
  authProvider?: OAuthClientProvider | undefined;
  /** Wraps the fetch used for this server (dynamic headers, no token passthrough, step-up hints). */
  wrapFetch?: ((fetch: FetchLike) => FetchLike) | undefined;
  /**
   * After the SDK answered `REDIRECT` (the user must sign in), waits for the authorization code and `iss` (RFC
   * 9207) that the redirect receiver got; the connect is then finished with them and retried once. Undefined: no
   * interactive sign-in.
   */
  waitForAuthorizationCode?:
    | ((signal: AbortSignal) => Promise<{ code: string; iss?: string | undefined }>)
    | undefined;
}

/** Gives the auth for a server config, or undefined for none. */
export type ServerAuthFactory = (config: HttpServerConfig | MCPServerConfig) => ServerAuth | undefined;

/** What a connection attempt needs besides the config. */
export interface OpenClientOptions {
  identity: ClientIdentity;
  fetch: FetchLike;
  /** Auth per server (OAuth provider, dynamic headers). @default none */
  serverAuth?: ServerAuthFactory | undefined;
  signal: AbortSignal;
  /** Timeout for the initialize request. */
  timeoutMs: number;
  onStderr: StderrListener;
  /** Masks known secrets in a stdio server's stderr and stdout noise before they are cut. @default none */
  mask?: ((text: string) => string) | undefined;
  /** Client capabilities and handlers for requests the server sends us. @default none declared */
  serverRequests?: ServerRequestSupport | undefined;
  /** The log level to ask for and where log messages go. @default log messages are dropped */
  serverLogs?: ServerLogSupport | undefined;
}

/** An open client and the transport it runs over. */
export interface OpenClient {
  client: Client;
  transport: Transport;
  /** The transport actually used: `auto` resolves to `http` or `sse`. */
  kind: 'stdio' | 'sse' | 'http';
  /** Process id of a stdio server. */
  pid: number | undefined;
  /** The protocol revision agreed with the server, e.g. `2026-07-28` or `2025-11-25`. */
  protocolVersion: string | undefined;
  /** `modern` when the server answered `server/discover` (2026-07-28 and later), `legacy` after `initialize`. */
  era: 'modern' | 'legacy';
}

/**
 * True when the era probe failed because the stdio server closed its end: servers built on SDKs that exit on
 * any request before `initialize` do this; they are 2025-era servers and get a plain `initialize` next.
 */
function probeClosedStdio(thrown: unknown, kind: 'stdio' | 'sse' | 'http'): boolean {
  return kind === 'stdio' && probeClosedTransport(thrown);
}

async function openOnce(
  config: MCPServerConfig,
  kind: 'stdio' | 'sse' | 'http',
  options: OpenClientOptions,
): Promise<OpenClient> {
  const serverAuth = options.serverAuth;
  if (kind === 'sse' && config.transport !== 'stdio' && config.auth?.type === 'token_exchange') {
    // The 2024-11-05 transport has one session (one event stream) per connection: every caller's calls would go
    // on the gateway's session, which a server that binds sessions to users refuses, and one that does not mixes.
    throw new ConfigError(
      `Server '${config.name}' has auth.type 'token_exchange', which needs Streamable HTTP, and it is reached over the legacy HTTP+SSE transport${config.transport === 'sse' ? '' : ' (its Streamable HTTP endpoint refused the connection)'}: that transport would carry every caller's calls on the gateway's own session. Use the server's Streamable HTTP endpoint (transport: 'http'), or give it an 'oauth' auth of its own.`,
      {
        issues: [{ path: 'auth.type', message: 'token_exchange needs transport http' }],
        server: config.name,
      },
    );
  }
  const auth = config.transport === 'stdio' ? undefined : serverAuth?.(config);
  if (config.transport !== 'stdio' && serverAuth === undefined) {
    const needs =
      config.auth !== undefined ? 'auth' : config.headersHelper !== undefined ? 'headersHelper' : undefined;
    if (needs !== undefined) {
      throw new ConfigError(
        `Server '${config.name}' sets '${needs}' but the manager has no serverAuth: pass serverAuth: createServerAuth() from mcp-interlock/auth.`,
        { issues: [{ path: needs, message: 'needs the serverAuth option' }], server: config.name },
      );
    }
  }
  try {
    await auth?.prepare?.();
    return await openWith(config, kind, options, auth);
  } catch (err) {
    // The SDK's interactive flow: the user signs in, the redirect receiver gets a code, the connect is retried.
    const wait = auth?.waitForAuthorizationCode;
    if (!(err instanceof UnauthorizedError) || wait === undefined || auth?.authProvider === undefined)
      throw authFailureOf(err, config.name) ?? err;
    const { code, iss } = await wait(options.signal);
    const url = new URL((config as HttpServerConfig).url);
    const fetch = auth.wrapFetch?.(options.fetch) ?? options.fetch;
    const finisher = new StreamableHTTPClientTransport(url, { fetch, authProvider: auth.authProvider });
    try {
      // RFC 9207: the SDK checks `iss` against the authorization server's issuer before redeeming the code.
      await finisher.finishAuth(code, iss);
    } catch (finishErr) {
      throw authFailureOf(finishErr, config.name) ?? finishErr;
    }
    return openWith(config, kind, options, auth);
  } finally {
    await auth?.close?.();
  }
}

async function openWith(
  config: MCPServerConfig,
  kind: 'stdio' | 'sse' | 'http',
  options: OpenClientOptions,
  auth: ServerAuth | undefined,
): Promise<OpenClient> {
  try {
    return await openEra(config, kind, options, auth, undefined);
  } catch (err) {
    if (!probeClosedStdio(err, kind) || options.signal.aborted) throw err;
    return openEra(config, kind, options, auth, { kind: 'legacy' });
  }
}

/**
 * One connect: `server/discover` first (protocol 2026-07-28 and later), `initialize` when the server shows no
 * sign of the new era. The legacy SSE transport has no probe: it only ever carries 2024/2025-era servers.
 */
async function openEra(
  config: MCPServerConfig,
  kind: 'stdio' | 'sse' | 'http',
  options: OpenClientOptions,
  auth: ServerAuth | undefined,
  prior: PriorDiscovery | undefined,
): Promise<OpenClient> {
  const client = new InterlockClient(options.identity, {
    capabilities: options.serverRequests?.capabilities ?? {},
    // MCP 2026-07-28 MRTR: a server that keeps answering `input_required` is stopped after this many rounds.
    inputRequired: { maxRounds: MAX_INPUT_ROUNDS },
    versionNegotiation: {
      mode: kind === 'sse' ? 'legacy' : 'auto',
      // A stdio server that ignores the probe is a 2025-era one: leave half the time for `initialize`.
      probe: kind === 'stdio' ? { timeoutMs: Math.max(1, Math.floor(options.timeoutMs / 2)) } : {},
    },
  });
  options.serverRequests?.install(client, config.name);
  const transport = createTransport(config, kind, {
    fetch: auth?.wrapFetch?.(options.fetch) ?? options.fetch,
    authProvider: auth?.authProvider,
    onStderr: options.onStderr,
    mask: options.mask,
  });
  // The SDK's era probe does not watch the signal: closing the transport ends it (and a stdio server with it).
  const onAbort = () => void transport.close().catch(() => {});
  options.signal.addEventListener('abort', onAbort, { once: true });
  try {
    await client.connect(transport, {
      signal: options.signal,
      timeout: options.timeoutMs,
      prior,
      inbound: {
        taskHandles: true,
        maxInputRequestsPerRound: options.serverRequests?.maxRequestsPerRound ?? MAX_INPUT_REQUESTS_PER_ROUND,
      },
    });
  } catch (err) {
    await client.close().catch(() => {});
    // A failed probe leaves the transport outside the client: close it here so no process outlives the attempt.
    await transport.close().catch(() => {});
    if (isRefusedAfterReauth(err) && auth?.authProvider !== undefined) {
      const origin = new URL((config as HttpServerConfig).url).origin;
      throw new AuthError(
        'token_refused',
        `Server '${config.name}' (${origin}) refused the access token again after re-authentication (HTTP 401): the authorization server may issue tokens for another resource (audience) or with too little scope. Check the server's OAuth configuration; no further token is requested.`,
        { cause: err, server: config.name },
      );
    }
    // We closed it: it wrote to stdout what is not MCP. That is the news, not the closed connection it caused.
    const noise = transport instanceof ProcessStdioTransport ? transport.stdoutNoise : undefined;
    if (noise !== undefined) throw noise;
    const tooLarge = transport instanceof ProcessStdioTransport ? transport.tooLarge : undefined;
    if (tooLarge !== undefined)
      throw new MessageTooLargeError(tooLarge.limit, { server: config.name, cause: err });
    const exit = transport instanceof ProcessStdioTransport ? transport.describeExit() : undefined;
    if (exit !== undefined) {
      const message = err instanceof Error ? err.message : String(err);
      throw Object.assign(new Error(`${message} (the server ${exit})`, { cause: err }), { serverExit: exit });
    }
    throw err;
  } finally {
    options.signal.removeEventListener('abort', onAbort);
  }
  const release = auth?.release;
  if (release !== undefined) client.whenClosed(() => void release().catch(() => {}));
  if (options.serverLogs !== undefined) await installServerLogs(client, config.name, options.serverLogs);
  const pid = transport instanceof ProcessStdioTransport ? transport.pid : undefined;
  const era = client.getProtocolEra() === 'modern' ? 'modern' : 'legacy';
  return { client, transport, kind, pid, protocolVersion: client.getNegotiatedProtocolVersion(), era };
}

/** The SDK's transport got a 401 again right after it fetched a new token (it then stops asking). */
function isRefusedAfterReauth(err: unknown): boolean {
  return (
    err instanceof SdkError && err.code === SdkErrorCode.ClientHttpAuthentication && httpStatusOf(err) === 401
  );
}

/** True for the answers after which the spec says to fall back to SSE: any 4xx but auth challenges. */
export function isSseFallbackError(err: unknown): boolean {
  const status = httpStatusOf(err);
  return status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403;
}

/** Opens a client for `config`, resolving `auto` to Streamable HTTP or SSE. */
export async function openClient(config: MCPServerConfig, options: OpenClientOptions): Promise<OpenClient> {
  if (config.transport === 'stdio') return openOnce(config, 'stdio', options);
  if (config.transport === 'sse') return openOnce(config, 'sse', options);
  if (config.transport === 'http') return openOnce(config, 'http', options);
  try {
    return await openOnce(config, 'http', options);
  } catch (err) {
    if (!isSseFallbackError(err) || options.signal.aborted) throw err;
    return openOnce(config, 'sse', options);
  }
}
