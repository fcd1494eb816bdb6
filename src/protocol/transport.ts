/**
 * Builds the SDK transports a connection runs over (stdio, Streamable HTTP, the 2024-11-05 HTTP+SSE transport) and
 * the environment of a stdio server. Connecting (era negotiation, auth, the SSE fallback) is interop's
 * (interop/open-client.ts); the inbound chain is installed by the client (client.ts).
 */

import {
  type FetchLike,
  type OAuthClientProvider,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type Transport,
} from '@modelcontextprotocol/client';
import type { MCPServerConfig, StdioServerConfig } from '../config/servers.js';
import { ProcessStdioTransport } from './stdio-transport.js';

/** Name and version this client reports in `initialize`. */
export interface ClientIdentity {
  name: string;
  version: string;
}

/** Where stderr lines of a stdio server go. */
export type StderrListener = (line: string) => void;

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

/** What a transport needs besides the server's config. */
export interface TransportParts {
  fetch: FetchLike;
  authProvider?: OAuthClientProvider | undefined;
  onStderr: StderrListener;
  /** Masks known secrets in a stdio server's stderr and stdout noise before they are cut. @default none */
  mask?: ((text: string) => string) | undefined;
}

/** The transport for `config`: a stdio server's process, or `kind` (`http`, `sse`) over HTTP. */
export function createTransport(
  config: MCPServerConfig,
  kind: 'stdio' | 'sse' | 'http',
  parts: TransportParts,
): Transport {
  if (config.transport === 'stdio') {
    return new ProcessStdioTransport({
      command: config.command,
      args: config.args,
      env: stdioEnvironment(config),
      cwd: config.cwd,
      onStderr: parts.onStderr,
      mask: parts.mask,
      maxMessageBytes: config.maxMessageBytes,
    });
  }
  const url = new URL(config.url);
  const requestInit: RequestInit = { headers: { ...config.headers } };
  const { fetch, authProvider } = parts;
  if (kind === 'sse') return new SSEClientTransport(url, { requestInit, fetch, authProvider });
  return new StreamableHTTPClientTransport(url, { requestInit, fetch, authProvider });
}
