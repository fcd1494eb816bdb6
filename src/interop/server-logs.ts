/**
 * Log messages servers send (`notifications/message`) and the level we ask for (issue 13). On 2025-era servers
 * the level is set once per connection with `logging/setLevel` (when the server declares `logging`); on
 * 2026-07-28 servers it travels with each request in `_meta` (`io.modelcontextprotocol/logLevel`), and a server
 * sends no log message for a request without it. Messages reach the manager's logger and its `server_log`
 * event, cut to a bounded length: a server's text is untrusted.
 */
import { type Client, LOG_LEVEL_META_KEY, type LoggingLevel } from '@modelcontextprotocol/client';
import { maskThenCut } from '../redact.js';
import type { Logger } from './logger.js';

/** The syslog levels MCP uses, least severe first. */
export const LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const satisfies readonly LoggingLevel[];

/** The longest log text passed on; the rest is cut with a visible notice. */
export const MAX_SERVER_LOG_CHARS = 2000;

/** One log message from a server. */
export interface ServerLogEntry {
  server: string;
  level: LoggingLevel;
  /** The server's logger name, when it gave one. */
  logger: string | undefined;
  /**
   * The message as text (JSON for structured data), known secrets masked, at most {@link MAX_SERVER_LOG_CHARS}
   * characters.
   */
  text: string;
}

/** What a connection needs to ask for and receive log messages. */
export interface ServerLogSupport {
  /** The level to ask for. @default none: 2025-era servers keep their own default, 2026 servers send nothing */
  level: LoggingLevel | undefined;
  /** Masks known secrets in a message before it is cut. @default none */
  mask?: ((text: string) => string) | undefined;
  onLog(entry: ServerLogEntry): void;
}

/** The `_meta` of a 2026-07-28 request that asks for log messages at `level` and above. */
export function logLevelMeta(level: LoggingLevel): Record<string, string> {
  return { [LOG_LEVEL_META_KEY]: level };
}

/** The message as text, masked and then cut (issue 38: cut first, a secret across the cut would stay half readable). */
function textOf(data: unknown, mask: ((text: string) => string) | undefined): string {
  let text: string;
  try {
    text = typeof data === 'string' ? data : (JSON.stringify(data) ?? String(data));
  } catch {
    text = String(data);
  }
  return maskThenCut(text, mask, MAX_SERVER_LOG_CHARS, (n) => `… [${n} more characters cut]`);
}

/**
 * Receives `client`'s log messages, and on a 2025-era server that declares `logging` sets the level once.
 * A server that refuses the level is not an error worth failing the connect over.
 */
export async function installServerLogs(
  client: Client,
  server: string,
  support: ServerLogSupport,
): Promise<void> {
  client.setNotificationHandler('notifications/message', (notification) => {
    const { level, logger, data } = notification.params;
    support.onLog({ server, level, logger, text: textOf(data, support.mask) });
  });
  const level = support.level;
  if (level === undefined || client.getProtocolEra() === 'modern') return;
  if (client.getServerCapabilities()?.logging === undefined) return;
  await client.setLoggingLevel(level).catch(() => {});
}

/** The logger method for a server's level: notice counts as info, critical and above as error. */
export function logAt(logger: Logger, level: LoggingLevel): Logger['info'] {
  if (level === 'debug') return logger.debug.bind(logger);
  if (level === 'info' || level === 'notice') return logger.info.bind(logger);
  if (level === 'warning') return logger.warn.bind(logger);
  return logger.error.bind(logger);
}
