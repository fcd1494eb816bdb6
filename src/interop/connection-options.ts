/** What the manager hands a connection (split from connection.ts): its hooks and what opening needs. */
import type { FetchLike } from '@modelcontextprotocol/client';
import type { Tracer } from '../otel.js';
import type { SecretRedactor } from '../redact.js';
import type { ServerConnection } from './connection.js';
import type { OpenClientOptions } from './open-client.js';

/** Hooks the manager passes to a connection. */
export interface ConnectionHooks {
  /** The live connection ended without `close()` (process exit, stream failure); reconnecting may follow. */
  onLost(connection: ServerConnection, error: Error): void;
  /** A reconnect attempt is scheduled. */
  onReconnecting(connection: ServerConnection, attempt: number, delayMs: number, error: Error): void;
  /** A reconnect succeeded; discovery ran again. */
  onReconnected(connection: ServerConnection, attempt: number): void;
  /** Reconnecting gave up after `maxAttempts`. */
  onFailed(connection: ServerConnection, error: Error): void;
  /** The server sent `notifications/tools/list_changed`. */
  onToolListChanged(connection: ServerConnection): void;
  onStderr(connection: ServerConnection, line: string): void;
  /** Something went wrong that did not end the connection (e.g. a non-JSON line on stdout). */
  onWarning(connection: ServerConnection, code: string, message: string): void;
}

/** What opening needs besides the config (the manager's identity, fetch and tracer). */
export type ConnectOptions = Omit<OpenClientOptions, 'signal' | 'timeoutMs' | 'onStderr' | 'mask'> & {
  tracer: Tracer;
  /**
   * Gives the fetch of this server anew for each connect attempt, the first and every reconnect (a server's own
   * certificate files are read there, so rotated ones are picked up). A rejection fails that attempt.
   * @default `fetch` for every attempt
   */
  resolveFetch?: (() => Promise<FetchLike>) | undefined;
  /** Masks known secrets out of stderr lines and connect errors. */
  redactor?: SecretRedactor | undefined;
};
