/**
 * Tool results to strings a model can read. Nothing is silently dropped: every content part becomes text
 * or a visible placeholder, and a cut result says how much was cut.
 */
import type { ContentBlock } from '@modelcontextprotocol/client';
import { isJsonObject } from '../json.js';

/** Default longest result string kept, in UTF-16 code units. */
export const DEFAULT_MAX_RESULT_CHARS = 100_000;
/** Longest JSON shown for a content part of an unknown type; longer ones get only a placeholder. */
const MAX_UNKNOWN_PART_JSON = 500;

/** Options of {@link mcpResultToString} and {@link toToolCallResult}. */
export interface ResultToStringOptions {
  /**
   * Characters of the result kept; the rest is cut and replaced by a notice saying how much was cut.
   * @default DEFAULT_MAX_RESULT_CHARS (100 000)
   */
  maxResultChars?: number | undefined;
}

/** A tool call's result: the string for the model plus what the server sent. */
export type ToolCallResult = {
  /** The result as one string ({@link mcpResultToString}). */
  text: string;
  /** True when the server reported the call as failed (`isError: true`). */
  isError: boolean;
  /** The content parts as the server sent them. */
  content: ContentBlock[];
  /** The server's structured result, when it sent one. */
  structuredContent?: Record<string, unknown>;
};

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'] as const;

/** A byte count for people: `512 B`, `1.2 KB`, `3 MB` (powers of 1024, one decimal at most). */
export function formatByteSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return 'unknown size';
  let value = Math.round(bytes);
  if (value < 1024) return `${value} B`;
  let unit = 0;
  // Step up while the rounded value would read 1024 or more.
  while (unit < UNITS.length - 1 && Math.round(value * 10) / 10 >= 1024) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1).replace(/\.0$/, '')} ${UNITS[unit]}`;
}

/** Decoded size of base64 data, from its length alone (whitespace and padding not counted). */
function base64ByteLength(data: string): number {
  let chars = 0;
  let padding = 0;
  for (let i = 0; i < data.length; i++) {
    const c = data.charCodeAt(i);
    if (c === 0x3d /* = */) padding++;
    else if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) chars++;
  }
  return Math.floor(((chars + padding) * 3) / 4) - Math.min(padding, 2);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** Compact JSON that never throws (BigInt as a string; circular or unserializable values as a note). */
function safeJson(value: unknown): string {
  try {
    const json = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    return json ?? String(value);
  } catch {
    return '[unserializable value]';
  }
}

function sizeLabel(data: unknown): string | undefined {
  return typeof data === 'string' ? formatByteSize(base64ByteLength(data)) : undefined;
}

function placeholder(kind: string, parts: (string | undefined)[]): string {
  const shown = parts.filter((p): p is string => p !== undefined);
  return shown.length === 0 ? `[${kind}]` : `[${kind}: ${shown.join(', ')}]`;
}

function unknownPart(part: unknown): string {
  const type =
    isJsonObject(part) && typeof part.type === 'string' ? part.type : part === null ? 'null' : typeof part;
  const json = safeJson(part);
  const label = `[unsupported content: ${type}]`;
  return json.length <= MAX_UNKNOWN_PART_JSON
    ? `${label} ${json}`
    : `${label} (${json.length} characters of JSON not shown)`;
}

function resourcePart(resource: unknown): string {
  if (!isJsonObject(resource)) return unknownPart({ type: 'resource', resource });
  const uri = str(resource.uri) ?? 'unknown URI';
  const mime = str(resource.mimeType);
  if (typeof resource.text === 'string') return `[resource: ${uri}]\n${resource.text}`;
  if (typeof resource.blob === 'string') {
    return placeholder('resource', [uri, mime ?? 'unknown type', sizeLabel(resource.blob)]);
  }
  return placeholder('resource', [uri, mime]);
}

/** One content part as text; `text` parts are returned as they are. */
function partToString(part: unknown): string {
  if (typeof part === 'string') return part;
  if (!isJsonObject(part)) return unknownPart(part);
  switch (part.type) {
    case 'text':
      return typeof part.text === 'string' ? part.text : unknownPart(part);
    case 'image':
    case 'audio':
      return placeholder(part.type, [str(part.mimeType) ?? 'unknown type', sizeLabel(part.data)]);
    case 'resource':
      return resourcePart(part.resource);
    case 'resource_link': {
      const link = placeholder('resource link', [
        str(part.name) ?? str(part.title) ?? 'unnamed',
        str(part.uri) ?? 'unknown URI',
        str(part.mimeType),
      ]);
      const description = str(part.description);
      return description === undefined ? link : `${link} ${description}`;
    }
    default:
      return unknownPart(part);
  }
}

function contentToString(content: readonly unknown[], structured: unknown): string {
  // One pass building the string: no array of lines, no closure, and nothing built for the usual single block.
  let out = '';
  let hasText = false;
  for (let i = 0; i < content.length; i++) {
    const part = content[i];
    // A hole in a sparse array is an empty line, as join would make it.
    const line = part === undefined && !(i in content) ? '' : partToString(part);
    if (typeof part === 'string' || (isJsonObject(part) && part.type === 'text')) hasText = true;
    out = i === 0 ? line : `${out}\n${line}`;
  }
  // MCP 2025-11-25 tools: structuredContent is the result's JSON; show it when no text part carries it.
  if (!hasText && structured !== undefined) {
    const json = safeJson(structured);
    out = content.length === 0 ? json : `${out}\n${json}`;
  }
  return out;
}

/** The body of a result, before the error prefix and truncation. */
function bodyOf(result: unknown): string {
  if (result === null || result === undefined) return '';
  if (typeof result === 'string') return result;
  if (typeof result !== 'object') return String(result);
  if (Array.isArray(result)) return contentToString(result, undefined);
  const r = result as Record<string, unknown>;
  if (Array.isArray(r.content)) return contentToString(r.content, r.structuredContent);
  // MCP 2024-10-07 servers answer `{ toolResult }`.
  if ('toolResult' in r) return valueToString(r.toolResult);
  if (typeof r.text === 'string') return r.text;
  if ('result' in r) return valueToString(r.result);
  if (r.structuredContent !== undefined) return safeJson(r.structuredContent);
  if (Object.keys(r).every((k) => k === 'isError' || k === '_meta')) return '';
  return safeJson(r);
}

function valueToString(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : safeJson(value);
}

/** Cuts `text` to `max` characters (never inside a surrogate pair) and appends a notice of the cut. */
function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let keep = max;
  const last = text.charCodeAt(keep - 1);
  if (keep > 0 && last >= 0xd800 && last <= 0xdbff) keep--;
  const cut = text.length - keep;
  return `${text.slice(0, keep)}\n\n[result truncated: ${cut} of ${text.length} characters cut]`;
}

function resolveMaxChars(value: number | undefined): number {
  const max = value ?? DEFAULT_MAX_RESULT_CHARS;
  if (!Number.isFinite(max) || max < 0) return DEFAULT_MAX_RESULT_CHARS;
  return Math.floor(max);
}

const ERROR_PREFIX = 'Error: ';

/**
 * A tool result as one string. Handles MCP `CallToolResult` (text parts joined with newlines, placeholders
 * for images, audio, blobs and links, embedded text resources under a `[resource: uri]` header,
 * `structuredContent` as compact JSON when there is no text part), plain `{ text }`, `{ result }`, strings,
 * and `null`/`undefined` (empty string). `isError: true` results start with `Error: `. Results longer than
 * `maxResultChars` are cut, with a notice of how many characters were cut.
 */
export function mcpResultToString(result: unknown, options: ResultToStringOptions = {}): string {
  let text = bodyOf(result);
  if (isJsonObject(result) && result.isError === true && !text.startsWith(ERROR_PREFIX)) {
    text = `${ERROR_PREFIX}${text.length > 0 ? text : 'the tool reported an error without details'}`;
  }
  return truncate(text, resolveMaxChars(options.maxResultChars));
}

/**
 * Builds a {@link ToolCallResult} from a raw MCP `CallToolResult` (or any shape {@link mcpResultToString}
 * accepts). `content` is a copy of the server's parts; for shapes without a `content` array it holds the
 * text as a single text part.
 */
export function toToolCallResult(raw: unknown, options: ResultToStringOptions = {}): ToolCallResult {
  const text = mcpResultToString(raw, options);
  const record = isJsonObject(raw) ? raw : undefined;
  const content: ContentBlock[] = Array.isArray(record?.content)
    ? [...(record.content as ContentBlock[])]
    : text.length > 0
      ? [{ type: 'text', text }]
      : [];
  const result: ToolCallResult = { text, isError: record?.isError === true, content };
  if (isJsonObject(record?.structuredContent)) result.structuredContent = record.structuredContent;
  return result;
}
