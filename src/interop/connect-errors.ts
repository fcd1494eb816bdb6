/**
 * What a failed connect reports (split from connection.ts): the reason in the server's or the SDK's words, the exit
 * and the stderr line that names the problem when the process died, what an OAuth error code means, and the last
 * stderr lines, masked.
 */
import { OAuthError } from '@modelcontextprotocol/client';
import type { MCPServerConfig } from '../config/servers.js';
import { ConnectionError, RequestTimeoutError } from '../errors.js';
import { StdoutNoiseError } from '../protocol/stdio-transport.js';
import type { SecretRedactor } from '../redact.js';
import { answeredText, connectReason, type HttpAnswer, notMcpReason } from './describe-error.js';
import { classifySdkError, type SdkFailureKind } from './sdk-errors.js';

/** Failures that an answer that was not MCP explains (an HTML 404, a web page where the endpoint should be). */
const NOT_MCP_FAILURES: ReadonlySet<SdkFailureKind> = new Set<SdkFailureKind>([
  'session_gone',
  'http_error',
  'unusable_answer',
  'stream_lost',
]);

/** What a failed connect is reported with. */
export interface ConnectFailure {
  config: MCPServerConfig;
  /** The server's last stderr lines. */
  stderr: readonly string[];
  /** How the server process ended, when it has ("exited with code 1"). */
  exit: string | undefined;
  redactor?: SecretRedactor | undefined;
  /** The last HTTP answer, for a server that is not MCP (an HTML 404). */
  answer: HttpAnswer | undefined;
}

/** The error a failed connect of `failure.config` is reported with. */
export function connectErrorOf(err: unknown, failure: ConnectFailure): Error {
  const { config, exit, redactor, answer } = failure;
  const name = config.name;
  const notMcp =
    answer === undefined ||
    config.transport === 'stdio' ||
    !NOT_MCP_FAILURES.has(classifySdkError(err).kind) ||
    oauthErrorMessage(err) !== undefined
      ? undefined
      : notMcpReason(config.transport, config.url, answer, answeredText(err));
  const base = (notMcp ?? oauthErrorMessage(err) ?? connectReason(err)).replace(/\.$/, '');
  const stderr = failure.stderr.slice(-5).join('\n');
  const detail = stderr === '' ? '' : `\nLast stderr lines:\n${stderr}`;
  if (err instanceof RequestTimeoutError) {
    const timedOut = new ConnectionError(`${base}${detail}`, { cause: err, server: name });
    return redactor?.maskError(timedOut) ?? timedOut;
  }
  if (err instanceof StdoutNoiseError) {
    // Its own words, not trimmed as server text: the quoted line is already cut, and the advice must stay whole.
    const noisy = new ConnectionError(`Server '${name}' failed to connect: ${err.message}.${detail}`, {
      cause: err,
      server: name,
    });
    return redactor?.maskError(noisy) ?? noisy;
  }
  const hint =
    config.transport === 'stdio' && classifySdkError(err).systemCode === 'ENOENT'
      ? ` Is '${config.command}' installed and on PATH?`
      : '';
  // When the process died, that is the news, with the stderr line that names the problem (a stack trace's
  // last lines rarely do): not the write EPIPE or 'Connection closed' it caused.
  const died = exit ?? (err as { serverExit?: string }).serverExit;
  const fault = died === undefined ? undefined : stderrFault(failure.stderr);
  const what =
    died !== undefined && fault !== undefined
      ? `the server ${died}: ${fault}`
      : `${base}${exit === undefined ? '' : ` (the server ${exit})`}`;
  const error = new ConnectionError(`Server '${name}' failed to connect: ${what}.${hint}${detail}`, {
    cause: err,
    server: name,
  });
  return redactor?.maskError(error) ?? error;
}

/**
 * The stderr line that names a problem, trimmed: an error's headline (`Error [ERR_MODULE_NOT_FOUND]: Cannot find
 * package 'x'`) first; else the first line that reads like a problem, skipping the source line and caret Node
 * prints above an uncaught error (`throw new ERR_MODULE_NOT_FOUND(...)`, `^`).
 */
function stderrFault(lines: readonly string[]): string | undefined {
  const headline = lines.find((l) => /^\s*[A-Z][A-Za-z]*(?:Error|Exception)(?: \[[A-Z0-9_]+\])?: \S/.test(l));
  const line =
    headline ??
    lines.find(
      (l) =>
        !/^\s*(?:throw\b|\^)/.test(l) &&
        /\b(?:[A-Z][A-Za-z]*Error|Error|error|ERR_[A-Z_]+|Cannot|cannot|not found|No such)\b/.test(l),
    );
  if (line === undefined) return undefined;
  const trimmed = line.trim().replace(/\.$/, '');
  return trimmed.length > 300 ? `${trimmed.slice(0, 300)}…` : trimmed;
}

/** What to check for each OAuth error code (RFC 6749 5.2, 4.1.2.1) a token or authorization endpoint answers. */
const OAUTH_HINTS: Readonly<Record<string, string>> = {
  invalid_client: 'check auth.clientId, auth.clientSecret (or privateKey) and auth.tokenEndpointAuthMethod',
  unauthorized_client: 'the client may not use this grant: check auth.grant and the client registration',
  invalid_grant: 'the code or refresh token was refused: sign in again',
  invalid_scope: 'check auth.scope against the scopes the server supports',
  access_denied: 'the sign-in was refused',
  unsupported_grant_type: 'the authorization server does not support this grant: check auth.grant',
};

/**
 * An OAuth error of the MCP SDK (it carries `errorCode`, e.g. `invalid_client`) as a message that names the code,
 * the server's description and what to check; `undefined` for other errors. The description comes from the
 * authorization server; no credential of ours is in it.
 */
function oauthErrorMessage(err: unknown): string | undefined {
  // The v2 SDK's OAuthError carries the OAuth `error` as `code`; older ones as `errorCode`.
  const code = err instanceof OAuthError ? err.code : (err as { errorCode?: unknown } | null)?.errorCode;
  if (!(err instanceof Error) || typeof code !== 'string' || code === '') return undefined;
  const description = err.message.trim().replace(/\.$/, '');
  const hint = OAUTH_HINTS[code];
  return `the authorization server answered '${code}'${description === '' ? '' : ` (${description})`}${hint === undefined ? '' : `; ${hint}`}`;
}
