/**
 * What went wrong, in one line a person can act on (issue 18, item 2). undici reports a refused connection as
 * `TypeError: fetch failed` with the reason two causes down, and the SDK puts a server's whole HTML error page
 * into its message; this finds the useful part of the cause chain and trims pages to their text.
 */

import type { FetchLike } from '@modelcontextprotocol/client';

/** Longest server text kept in a message. */
const MAX_SERVER_TEXT = 200;

interface SystemErrorLike {
  code?: unknown;
  address?: unknown;
  port?: unknown;
  hostname?: unknown;
  message?: unknown;
}

/** A system-level reason found in `err` or its causes, such as `nothing is listening at 127.0.0.1:3999 (...)`. */
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
        // Issue 39: what the user can act on first; the protocol step that noticed stays in the error's `cause`.
        return `nothing is listening at ${where ?? 'that address'} (connection refused): start the server, or check the host and port of its url`;
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

/**
 * The message of a failed connect: the network reason when the cause chain holds one (`nothing is listening at
 * 127.0.0.1:3999 ...`), else the error's own message, trimmed. The protocol step that noticed the network failure
 * (`Version negotiation probe failed: fetch failed`) says nothing a user can act on: it stays in `cause`, which
 * `interlock --verbose` prints (issue 39).
 */
export function connectReason(err: unknown): string {
  const reason = networkReason(err);
  if (reason !== undefined) return reason;
  return serverText(err instanceof Error ? err.message : String(err));
}

/** The messages of `err`'s causes, outermost first (for `--verbose`): the protocol detail a message leaves out. */
export function causeMessages(err: unknown): string[] {
  const out: string[] = [];
  let e = err instanceof Error ? err.cause : undefined;
  for (let depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    const message = e instanceof Error ? e.message : String(e);
    const code = (e as { code?: unknown }).code;
    out.push(typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message);
    e = e instanceof Error ? e.cause : undefined;
  }
  return out;
}

/**
 * An answer from a remote server's own URL that no MCP transport gives: an error status, or a body that is neither
 * JSON nor an event stream. Kept while connecting to explain a failed connect (issue 39: an HTML 404 page).
 */
export interface HttpAnswer {
  readonly method: string;
  readonly status: number;
  readonly statusText: string;
  readonly contentType: string | undefined;
}

/** Content types an MCP server answers with (Streamable HTTP and HTTP+SSE). */
const MCP_CONTENT = /^\s*(?:application\/json|text\/event-stream)\b/i;

/**
 * `fetch`, telling `seen` about each answer from `url` itself (not OAuth metadata, not the SSE message endpoint)
 * that is not MCP. Reads only the status and headers: the body stays for the SDK.
 */
export function recordAnswers(fetch: FetchLike, url: string, seen: (answer: HttpAnswer) => void): FetchLike {
  const own = withoutQuery(url);
  return async (input, init) => {
    const response = await fetch(input, init);
    const contentType = response.headers.get('content-type') ?? undefined;
    const unusual = !response.ok || (contentType !== undefined && !MCP_CONTENT.test(contentType));
    if (unusual && withoutQuery(String(input)) === own) {
      seen({
        method: init?.method ?? 'GET',
        status: response.status,
        statusText: response.statusText,
        contentType,
      });
    }
    return response;
  };
}

function withoutQuery(url: string): string {
  if (!URL.canParse(url)) return url;
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}

/**
 * A connect that failed because the URL does not speak the MCP transport asked for: what it answered instead,
 * and what to try. Undefined when `answer` is not such an answer (auth, rate limits and the like explain
 * themselves).
 */
export function notMcpReason(
  transport: 'http' | 'sse' | 'auto',
  url: string,
  answer: HttpAnswer,
  text: string | undefined,
): string | undefined {
  const { status } = answer;
  // An MCP server's own refusal (a JSON-RPC error, a JSON 404) is not this; neither are auth and overload.
  if (answer.contentType !== undefined && MCP_CONTENT.test(answer.contentType)) return undefined;
  if (status === 401 || status === 403 || status === 429 || status >= 500) return undefined;
  const type = answer.contentType?.split(';')[0]?.trim();
  const page = text === undefined ? '' : pageSummary(text);
  const what = [type ?? 'no content type', page === '' ? undefined : `"${page}"`]
    .filter((part) => part !== undefined)
    .join(': ');
  const shown = withoutQuery(url);
  const answered = `${answer.method} ${shown} answered HTTP ${status}${answer.statusText === '' ? '' : ` ${answer.statusText}`} (${what})`;
  const path = URL.canParse(shown) ? new URL(shown).pathname : '';
  const checkPath = /^\/mcp\/?$/i.test(path)
    ? 'Check that this is the endpoint the server documents'
    : 'Check the path (servers often serve MCP at /mcp)';
  if (transport === 'sse') {
    return `${answered}: this URL does not speak MCP over HTTP+SSE. Check the path (the SSE endpoint is often /sse), or, if the server speaks Streamable HTTP, set type: http (transport: 'http')`;
  }
  if (transport === 'auto') {
    return `${answered}: this URL speaks neither MCP transport (Streamable HTTP, HTTP+SSE). ${checkPath}, or its HTTP+SSE endpoint (often /sse)`;
  }
  const sse = /\/sse\/?$/i.test(path)
    ? "this path looks like an HTTP+SSE endpoint: set type: sse (transport: 'sse')"
    : "if the server speaks the older HTTP+SSE transport, set type: sse (transport: 'sse') with its SSE endpoint (often /sse)";
  return `${answered}: this URL does not speak MCP (Streamable HTTP). ${checkPath}; ${sse}`;
}

/** The body the server answered, as the SDK kept it in the error (or a cause): `SdkHttpError.data.text`. */
export function answeredText(err: unknown): string | undefined {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 8; depth++) {
    const text = (e as { data?: { text?: unknown } }).data?.text;
    if (typeof text === 'string') return text;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Longest page text quoted in a not-MCP answer. */
const MAX_PAGE_TEXT = 80;

/** A page in a few words: its title, or its text when the title says nothing (`Error`). */
function pageSummary(text: string): string {
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]?.trim();
  const body = serverText(
    text.replace(/<head[\s\S]*?<\/head>/i, ' ').replace(/<title[\s\S]*?<\/title>/i, ' '),
  );
  const words = title !== undefined && /\s/.test(title) ? serverText(title) : body || (title ?? '');
  return words.length > MAX_PAGE_TEXT ? `${words.slice(0, MAX_PAGE_TEXT)}…` : words;
}
