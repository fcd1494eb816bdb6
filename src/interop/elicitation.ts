/**
 * What Interlock checks in an elicitation before anyone is asked (issue 13). URL mode: the URL a server wants
 * the user to open is parsed once and refused when it could harm or mislead (a scheme other than https, or
 * http to a loopback host; user info that hides the real host; control characters; invisible or formatting
 * characters in the URL, raw or percent-encoded, or in the message, issue 38); the handler sees the full
 * URL and whether its host is punycode. Nothing here ever fetches the URL (MCP 2026-07-28 elicitation, "Safe
 * URL Handling": clients MUST NOT pre-fetch it). Form mode: the schema's defaults, including the newer enum
 * forms (titled `oneOf`/`anyOf` options and multi-select arrays), fill what an accepted answer leaves out.
 */
import type { ElicitRequestFormParams, ElicitResult } from '@modelcontextprotocol/client';
import punycode from 'punycode.js';

/** The longest URL a server may ask the user to open. */
export const MAX_ELICITATION_URL_LENGTH = 8192;

/** A URL-mode elicitation, checked: what an app shows before the user consents to open the URL. */
export interface UrlElicitationRequest {
  /** Why the server wants the user to open the URL. */
  message: string;
  /** The full URL, exactly as the server sent it: show all of it before asking for consent. */
  url: string;
  /** The host, lowercase, as the URL parser reads it (an IDN host stays in its `xn--` punycode form). */
  host: string;
  /** The host with punycode labels decoded, for display beside `host`. */
  displayHost: string;
  /**
   * True when a label of the host is punycode (`xn--`): the host may imitate another one with look-alike
   * letters. Warn the user (the spec's "SHOULD have warnings for ambiguous/suspicious URIs").
   */
  punycode: boolean;
  /** The server's id for this elicitation (2025-11-25), when it gave one. */
  elicitationId: string | undefined;
}

/** The outcome of checking a URL: the request to hand on, or why it is refused. */
export type UrlCheck = { ok: true; request: UrlElicitationRequest } | { ok: false; reason: string };

const LOOPBACK_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/;

/**
 * Characters a person cannot see or that reorder what they see (issue 38): the Unicode format category (bidi
 * overrides and isolates U+202A-202E and U+2066-2069, the Arabic letter mark U+061C, zero-width U+200B-200D,
 * U+FEFF, the soft hyphen U+00AD, ...), every default-ignorable code point (Hangul fillers, variation selectors,
 * tags) and the line and paragraph separators. A URL's host parser drops some of them silently, so
 * `exa\u00ADmple.com` passes an allowlist of `example.com` while the user is shown something else.
 */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}\u2028\u2029]/u;
/** In a URL, also every space but U+0020 (refused raw as a control character, and fine as `%20`). */
const INVISIBLE_IN_URL =
  /[\p{Cf}\p{Default_Ignorable_Code_Point}\u2028\u2029\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/u;

/** `U+202E` for the first invisible or format character of `text`, or undefined. */
function invisibleIn(text: string, pattern: RegExp): string | undefined {
  const found = pattern.exec(text)?.[0];
  return found === undefined
    ? undefined
    : `U+${(found.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * The first invisible or format character hidden in the URL's percent-encoded runs: an app (and a browser's
 * address bar) shows `%E2%80%AE` decoded, and the host parser decodes and then drops `%E2%80%8B`.
 */
function invisibleEncoded(url: string): string | undefined {
  for (const run of url.match(/(?:%[0-9a-f]{2})+/gi) ?? []) {
    const bytes = Uint8Array.from(run.slice(1).split('%'), (hex) => Number.parseInt(hex, 16));
    const found = invisibleIn(new TextDecoder().decode(bytes), INVISIBLE_IN_URL);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Why a URL request hides something from the person asked, or undefined. */
function hiddenCharacters(url: string, message: string): string | undefined {
  const raw = invisibleIn(url, INVISIBLE_IN_URL);
  if (raw !== undefined) return `the URL contains the invisible or formatting character ${raw}`;
  const encoded = invisibleEncoded(url);
  if (encoded !== undefined) {
    return `the URL contains the invisible or formatting character ${encoded}, percent-encoded`;
  }
  const inMessage = typeof message === 'string' ? invisibleIn(message, INVISIBLE) : undefined;
  if (inMessage !== undefined) {
    return `its message contains the invisible or formatting character ${inMessage}`;
  }
  return undefined;
}

/** The host part of an absolute URL as written (before the parser normalizes it), or undefined. */
function writtenHost(url: string): string | undefined {
  const authority = /^[a-z][a-z0-9+.-]*:[\\/]{2}([^/\\?#]*)/i.exec(url)?.[1];
  if (authority === undefined) return undefined;
  const host = authority.slice(authority.lastIndexOf('@') + 1);
  return host.startsWith('[') ? host : host.replace(/:[^:]*$/, '');
}

/**
 * The host with each punycode label decoded by RFC 3492 (not by the URL parser, whose IDNA checks differ between
 * Node versions: Node 24 accepts `xn--example-376c`, which decodes to a bidi override, and leaves it encoded), or
 * why a label is refused: it does not decode, or it decodes to a character the user cannot see.
 */
function decodeHost(host: string): { ok: true; display: string } | { ok: false; reason: string } {
  const labels: string[] = [];
  for (const label of host.toLowerCase().split(/[.\u3002\uff0e\uff61]/)) {
    if (!label.startsWith('xn--')) {
      labels.push(label);
      continue;
    }
    let decoded: string;
    try {
      decoded = punycode.decode(label.slice(4));
    } catch {
      return { ok: false, reason: `the host label '${label}' is not valid punycode` };
    }
    const hidden = invisibleIn(decoded, INVISIBLE_IN_URL);
    if (hidden !== undefined) {
      return {
        ok: false,
        reason: `the host contains the invisible or formatting character ${hidden}, in punycode`,
      };
    }
    labels.push(decoded);
  }
  return { ok: true, display: labels.join('.') };
}

/** Checks the URL of a URL-mode elicitation. Never fetches it. */
export function checkElicitationUrl(params: {
  url: string;
  message: string;
  elicitationId?: string | undefined;
}): UrlCheck {
  const raw = params.url;
  if (typeof raw !== 'string' || raw.length === 0) return { ok: false, reason: 'the request has no URL' };
  if (raw.length > MAX_ELICITATION_URL_LENGTH) {
    return {
      ok: false,
      reason: `the URL is ${raw.length} characters long, over the limit of ${MAX_ELICITATION_URL_LENGTH}`,
    };
  }
  // The parser drops tabs and newlines silently: what the user is shown must be what would be opened.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
  if (/[\u0000-\u0020\u007f-\u009f]/.test(raw)) {
    return { ok: false, reason: 'the URL contains spaces or control characters' };
  }
  const hidden = hiddenCharacters(raw, params.message);
  if (hidden !== undefined) return { ok: false, reason: hidden };
  // Punycode as written is checked before the parser, so every Node version refuses the same URLs the same way.
  const written = writtenHost(raw);
  if (written !== undefined) {
    const decoded = decodeHost(written);
    if (!decoded.ok) return decoded;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'the URL is not a valid absolute URL' };
  }
  const scheme = url.protocol;
  if (scheme !== 'https:' && scheme !== 'http:') {
    return {
      ok: false,
      reason: `the scheme '${scheme}' is refused: only https URLs (or http to a loopback host) are shown`,
    };
  }
  if (scheme === 'http:' && !LOOPBACK_HOST.test(url.hostname)) {
    return {
      ok: false,
      reason: `plain http to '${url.hostname}' is refused: only https URLs (or http to a loopback host) are shown`,
    };
  }
  if (url.username !== '' || url.password !== '') {
    return {
      ok: false,
      reason: 'a URL with a user name or password is refused: it hides the host it really opens',
    };
  }
  const host = url.hostname;
  const punycode = host.split('.').some((label) => label.startsWith('xn--'));
  // The parser turns a Unicode host into punycode, so the parsed host is checked again.
  const display = decodeHost(host);
  if (!display.ok) return display;
  const displayHost = display.display;
  return {
    ok: true,
    request: {
      message: params.message,
      url: raw,
      host,
      displayHost,
      punycode,
      elicitationId: params.elicitationId,
    },
  };
}

/**
 * SEP-1034: an accepted answer gets the schema's `default` for each field it leaves out, for every field kind
 * the spec allows (string, number, boolean, single-select enums with or without titles, multi-select arrays).
 * Nothing the user gave is overwritten, and an array default is copied, not shared.
 */
export function withSchemaDefaults(
  answer: ElicitResult,
  schema: ElicitRequestFormParams['requestedSchema'],
): ElicitResult {
  if (answer.action !== 'accept') return answer;
  const content: Record<string, unknown> = { ...(answer.content ?? {}) };
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const fallback = (property as { default?: unknown }).default;
    if (fallback === undefined || content[name] !== undefined) continue;
    content[name] = Array.isArray(fallback) ? [...fallback] : fallback;
  }
  return { ...answer, content: content as ElicitResult['content'] };
}

/** One option of an enum field: the value sent back, and the title shown. */
export interface FormOption {
  value: string;
  title: string;
}

/** One field of a form-mode elicitation, in the shape a prompt or a form needs. */
export interface FormField {
  name: string;
  /** The title to show (the schema's `title`, else the name). */
  title: string;
  description: string | undefined;
  kind: 'string' | 'number' | 'integer' | 'boolean' | 'choice' | 'choices';
  /** The options of a `choice` (single select) or `choices` (multi select) field. */
  options: FormOption[];
  required: boolean;
  default: unknown;
  /** `email`, `uri`, `date` or `date-time` for strings that declare it. */
  format: string | undefined;
}

type SchemaProperty = Record<string, unknown>;

function optionsOf(property: SchemaProperty): FormOption[] | undefined {
  const list = (v: unknown) => (Array.isArray(v) ? v : undefined);
  const titled = list(property.oneOf) ?? list(property.anyOf);
  if (titled !== undefined) {
    return titled.flatMap((o: { const?: unknown; title?: unknown }) =>
      typeof o?.const === 'string'
        ? [{ value: o.const, title: typeof o.title === 'string' ? o.title : o.const }]
        : [],
    );
  }
  const plain = list(property.enum);
  if (plain === undefined) return undefined;
  // The legacy form: `enum` with `enumNames` as the titles.
  const names = list(property.enumNames);
  return plain.flatMap((value, i) =>
    typeof value === 'string'
      ? [{ value, title: typeof names?.[i] === 'string' ? (names[i] as string) : value }]
      : [],
  );
}

/** The fields of a form-mode schema, in order, with enum options normalized across the spec's enum forms. */
export function formFields(schema: ElicitRequestFormParams['requestedSchema']): FormField[] {
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(schema.properties ?? {}).map(([name, raw]) => {
    const property = raw as SchemaProperty;
    const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
    let kind: FormField['kind'] = 'string';
    let options: FormOption[] = [];
    if (property.type === 'array') {
      kind = 'choices';
      options = optionsOf((property.items ?? {}) as SchemaProperty) ?? [];
    } else {
      const single = optionsOf(property);
      if (single !== undefined) {
        kind = 'choice';
        options = single;
      } else if (property.type === 'number' || property.type === 'integer' || property.type === 'boolean') {
        kind = property.type;
      }
    }
    return {
      name,
      title: str(property.title) ?? name,
      description: str(property.description),
      kind,
      options,
      required: required.has(name),
      default: property.default,
      format: str(property.format),
    };
  });
}
