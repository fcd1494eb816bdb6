/**
 * What went wrong, in one line a person can act on (issue 18, item 2). undici reports a refused connection as
 * `TypeError: fetch failed` with the reason two causes down, and the SDK puts a server's whole HTML error page
 * into its message; this finds the useful part of the cause chain and trims pages to their text.
 */

/** Longest server text kept in a message. */
const MAX_SERVER_TEXT = 200;

interface SystemErrorLike {
  code?: unknown;
  address?: unknown;
  port?: unknown;
  hostname?: unknown;
  message?: unknown;
}

/** A system-level reason found in `err` or its causes, such as `connection refused at 127.0.0.1:3999`. */
export function networkReason(err: unknown): string | undefined {
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    const s = e as SystemErrorLike & { cause?: unknown };
    const where =
      typeof s.address === 'string'
        ? `${s.address}${typeof s.port === 'number' ? `:${s.port}` : ''}`
        : typeof s.hostname === 'string'
          ? s.hostname
          : undefined;
    switch (s.code) {
      case 'ECONNREFUSED':
        return `connection refused${where === undefined ? '' : ` at ${where}`} (is the server running?)`;
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return `host ${where ?? ''} not found (DNS)`.replace('host  not', 'host not');
      case 'ECONNRESET':
        return `connection reset by the server${where === undefined ? '' : ` at ${where}`}`;
      case 'ETIMEDOUT':
      case 'UND_ERR_CONNECT_TIMEOUT':
        return `connect timed out${where === undefined ? '' : ` at ${where}`}`;
      case 'EHOSTUNREACH':
      case 'ENETUNREACH':
        return `no route to ${where ?? 'the host'}`;
      default:
        if (typeof s.code === 'string' && /^(ERR_TLS|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED)/.test(s.code)) {
          return `TLS: ${String(s.message ?? s.code)} (${s.code})`;
        }
    }
    e = s.cause;
  }
  return undefined;
}

/** `text` with HTML reduced to its words, whitespace collapsed and the length capped. */
export function serverText(text: string): string {
  let out = text;
  if (/<(?:!doctype|html|head|body|title|p|div|h1|pre)\b/i.test(out)) {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(out)?.[1];
    out = (title ?? out.replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ').replace(/<[^>]+>/g, ' '))
      .replace(/&nbsp;/g, ' ')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  }
  out = out.replace(/\s+/g, ' ').trim();
  return out.length > MAX_SERVER_TEXT ? `${out.slice(0, MAX_SERVER_TEXT)}…` : out;
}

/** The message of a failed connect: the error's own, trimmed, with the network reason when it hides one. */
export function connectReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const reason = networkReason(err);
  const text = serverText(message);
  if (reason === undefined) return text;
  // `fetch failed` says nothing; the reason says everything.
  return /^fetch failed\.?$/i.test(text) ? reason : `${text}: ${reason}`;
}
