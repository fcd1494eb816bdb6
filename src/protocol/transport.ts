/**
 * Builds SDK transports from configs and opens a client over them. `auto` tries Streamable HTTP and falls back
 * to the 2024-11-05 HTTP+SSE transport when the server answers the initialize POST with a 4xx, as the MCP spec
 * (2025-03-26, "Backwards compatibility") describes.
 */

import type { FetchLike, OAuthClientProvider, Transport } from '@modelcontextprotocol/client';
import {
  type Client,
  type PriorDiscovery,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import type { HttpServerConfig, MCPServerConfig, StdioServerConfig } from '../config/servers.js';
import { AuthError, ConfigError } from '../errors.js';
import { authFailureOf } from '../interop/request-errors.js';
import { httpStatusOf, probeClosedTransport } from '../interop/sdk-errors.js';
import { installServerLogs, type ServerLogSupport } from '../interop/server-logs.js';
import type { ServerRequestSupport } from '../interop/server-requests.js';
import { MAX_INPUT_REQUESTS_PER_ROUND, MAX_INPUT_ROUNDS, MAX_REQUEST_STATE_CHARS } from './bounds.js';
import { InterlockClient } from './client.js';
import { ProcessStdioTransport } from './stdio-transport.js';
import { acceptTaskResults } from './task-handles.js';

/** Name and version this client reports in `initialize`. */
export interface ClientIdentity {
  name: string;
  version: string;
}

/** Where stderr lines of a stdio server go. */
export type StderrListener = (line: string) => void;

/**
 * How one HTTP server authenticates (issue 9). Built by the auth area (`createServerAuth`); interop only sees this
 * small interface.
 */
export interface ServerAuth {
  /** Runs before the transport is built (e.g. starts a redirect receiver). */
  prepare?: (() => Promise<void>) | undefined;
  /** Releases what `prepare` started; called once the connect attempt settled. */
  close?: (() => Promise<void>) | undefined;
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

/**
 * The variables every stdio server inherits, the same list as the SDK's `getDefaultEnvironment` (a test keeps the
 * two equal): what a program needs to find other programs, the home directory and a temp directory. Kept here
 * because `@modelcontextprotocol/client/stdio` loads cross-spawn at import (issue 15, import time).
 */
const DEFAULT_INHERITED_ENV =
  process.platform === 'win32'
    ? [
        'APPDATA',
        'COMSPEC',
        'HOMEDRIVE',
        'HOMEPATH',
        'LOCALAPPDATA',
        'PATH',
        'PATHEXT',
        'PROCESSOR_ARCHITECTURE',
        'PROGRAMDATA',
        'PROGRAMFILES',
        'PROGRAMFILES(X86)',
        'PROGRAMW6432',
        'SYSTEMDRIVE',
        'SYSTEMROOT',
        'TEMP',
        'USERNAME',
        'USERPROFILE',
        'WINDIR',
      ]
    : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];

/** The minimal environment of a stdio server; a value starting with `()` is an exported shell function, not passed. */
export function defaultStdioEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of DEFAULT_INHERITED_ENV) {
    const value = process.env[key];
    if (value !== undefined && !value.startsWith('()')) env[key] = value;
  }
  return env;
}

/** The environment a stdio server starts with: the SDK's minimal list, opted-in variables, then `env`. */
export function stdioEnvironment(
  config: Pick<StdioServerConfig, 'env' | 'inheritEnv'>,
  parentEnv: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env = defaultStdioEnvironment();
  if (config.inheritEnv === true) {
    for (const [key, value] of Object.entries(parentEnv)) if (value !== undefined) env[key] = value;
  } else if (Array.isArray(config.inheritEnv)) {
    for (const key of config.inheritEnv) {
      const value = parentEnv[key];
      if (value !== undefined) env[key] = value;
    }
  }
  return Object.assign(env, config.env);
}

function createTransport(
  config: MCPServerConfig,
  kind: 'stdio' | 'sse' | 'http',
  options: OpenClientOptions,
  auth?: ServerAuth,
): Transport {
  if (config.transport === 'stdio') {
    return new ProcessStdioTransport({
      command: config.command,
      args: config.args,
      env: stdioEnvironment(config),
      cwd: config.cwd,
      onStderr: options.onStderr,
      mask: options.mask,
      maxLineBytes: config.maxMessageBytes,
    });
  }
  const url = new URL(config.url);
  const requestInit: RequestInit = { headers: { ...config.headers } };
  const fetch = auth?.wrapFetch?.(options.fetch) ?? options.fetch;
  const authProvider = auth?.authProvider;
  if (kind === 'sse') return new SSEClientTransport(url, { requestInit, fetch, authProvider });
  return new StreamableHTTPClientTransport(url, { requestInit, fetch, authProvider });
}

async function openOnce(
  config: MCPServerConfig,
  kind: 'stdio' | 'sse' | 'http',
  options: OpenClientOptions,
): Promise<OpenClient> {
  const serverAuth = options.serverAuth;
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
  const transport = createTransport(config, kind, options, auth);
  acceptTaskResults(transport);
  // The SDK's era probe does not watch the signal: closing the transport ends it (and a stdio server with it).
  const onAbort = () => void transport.close().catch(() => {});
  options.signal.addEventListener('abort', onAbort, { once: true });
  try {
    await client.connect(transport, { signal: options.signal, timeout: options.timeoutMs, prior });
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
    const exit = transport instanceof ProcessStdioTransport ? transport.describeExit() : undefined;
    if (exit !== undefined) {
      const message = err instanceof Error ? err.message : String(err);
      throw Object.assign(new Error(`${message} (the server ${exit})`, { cause: err }), { serverExit: exit });
    }
    throw err;
  } finally {
    options.signal.removeEventListener('abort', onAbort);
  }
  boundInputRounds(transport, options.serverRequests?.maxRequestsPerRound ?? MAX_INPUT_REQUESTS_PER_ROUND);
  if (options.serverLogs !== undefined) await installServerLogs(client, config.name, options.serverLogs);
  const pid = transport instanceof ProcessStdioTransport ? transport.pid : undefined;
  const era = client.getProtocolEra() === 'modern' ? 'modern' : 'legacy';
  return { client, transport, kind, pid, protocolVersion: client.getNegotiatedProtocolVersion(), era };
}

/**
 * Stops an `input_required` answer before the SDK (or the call path) acts on it when its opaque `requestState` is
 * larger than {@link MAX_REQUEST_STATE_CHARS} (it would be echoed back round after round), or when it carries more
 * than `maxRequests` input requests (each one asks a person or a model: issue 38). The response becomes a
 * JSON-RPC error that says why, so no handler is asked. Installed after connect, over the handler the client set.
 */
function boundInputRounds(transport: Transport, maxRequests: number): void {
  const deliver = transport.onmessage;
  if (deliver === undefined) return;
  transport.onmessage = (message, extra) => {
    const result = (
      message as { result?: { resultType?: unknown; requestState?: unknown; inputRequests?: unknown } }
    ).result;
    const refused = result?.resultType === 'input_required' ? refusedRound(result, maxRequests) : undefined;
    if (refused === undefined) {
      deliver(message, extra);
      return;
    }
    const id = (message as { id: string | number }).id;
    deliver(
      { jsonrpc: '2.0', id, error: { code: ProtocolErrorCode.InternalError, message: refused } },
      extra,
    );
  };
}

/** Why an `input_required` result is refused, or undefined. */
function refusedRound(
  result: { requestState?: unknown; inputRequests?: unknown },
  maxRequests: number,
): string | undefined {
  const state = result.requestState;
  if (typeof state === 'string' && state.length > MAX_REQUEST_STATE_CHARS) {
    return `its input_required answer carried a requestState of ${state.length} characters, over Interlock's limit of ${MAX_REQUEST_STATE_CHARS}; it was not sent back and the call is stopped`;
  }
  const requests = result.inputRequests;
  if (typeof requests !== 'object' || requests === null) return undefined;
  let count = 0;
  for (const _ in requests) {
    if (++count > maxRequests) {
      const total = Object.keys(requests).length;
      return `its input_required answer carried ${total} input requests in one round, over Interlock's limit of ${maxRequests} per round; none was answered and the call is stopped`;
    }
  }
  return undefined;
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
