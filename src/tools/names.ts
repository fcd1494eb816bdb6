/**
 * Exposed tool names: `mcp__{server}__{tool}`. Tool names that servers send are data, so the tool part is
 * sanitized to `[A-Za-z0-9_-]`, shortened to a length every model API accepts, and made unique with a short
 * deterministic hash. {@link ToolNameRegistry} keeps the exact map back to (server, original tool name).
 */
import { createHash } from 'node:crypto';
import { ConfigError, ToolSchemaError } from '../errors.js';

/** Default longest exposed name: the limit of the most restrictive model APIs. */
export const DEFAULT_MAX_TOOL_NAME_LENGTH = 64;
/** Largest `maxToolNameLength` that may be configured. */
export const MAX_TOOL_NAME_LENGTH_LIMIT = 128;
/**
 * Smallest `maxToolNameLength` that may be configured: room for the longest server name (40), the
 * `mcp__`/`__` frame (7) and a hash suffix (9), so every valid server can expose every tool.
 */
export const MIN_TOOL_NAME_LENGTH = 56;
/** Longest original tool name accepted at discovery. */
export const MAX_ORIGINAL_TOOL_NAME_LENGTH = 256;

const PREFIX = 'mcp__';
const SEPARATOR = '__';
const HASH_HEX_CHARS = 8;
/** `_` plus the hash. */
const SUFFIX_LENGTH = 1 + HASH_HEX_CHARS;
const MAX_SERVER_NAME_LENGTH = 40;
const SAFE_NAME = /^[A-Za-z0-9_-]+$/;
const UNSAFE_RUN = /[^A-Za-z0-9_-]+/gu;

/** Options of {@link makeToolName} and {@link ToolNameRegistry}. */
export interface ToolNameOptions {
  /**
   * Longest exposed name, between {@link MIN_TOOL_NAME_LENGTH} and {@link MAX_TOOL_NAME_LENGTH_LIMIT}.
   * @default DEFAULT_MAX_TOOL_NAME_LENGTH (64)
   */
  maxLength?: number | undefined;
}

/** A server name and an original tool name. */
export interface ToolRef {
  readonly server: string;
  readonly tool: string;
}

/**
 * True when `server` is a valid server name: 1-40 characters of `[A-Za-z0-9_-]`, no `__`, not starting or
 * ending with `_`. These rules are what make {@link parseToolName} unambiguous.
 */
export function isValidServerName(server: string): boolean {
  return (
    server.length >= 1 &&
    server.length <= MAX_SERVER_NAME_LENGTH &&
    SAFE_NAME.test(server) &&
    !server.includes(SEPARATOR) &&
    !server.startsWith('_') &&
    !server.endsWith('_')
  );
}

function resolveMaxLength(maxLength: number | undefined): number {
  const value = maxLength ?? DEFAULT_MAX_TOOL_NAME_LENGTH;
  if (!Number.isInteger(value) || value < MIN_TOOL_NAME_LENGTH || value > MAX_TOOL_NAME_LENGTH_LIMIT) {
    throw new ConfigError(
      `maxToolNameLength must be an integer between ${MIN_TOOL_NAME_LENGTH} and ${MAX_TOOL_NAME_LENGTH_LIMIT}, got ${String(value)}.`,
      { issues: [{ path: 'maxToolNameLength', message: 'out of range' }] },
    );
  }
  return value;
}

function assertServerName(server: string): void {
  if (!isValidServerName(server)) {
    throw new ConfigError(
      `Invalid server name ${JSON.stringify(server)}: use 1-${MAX_SERVER_NAME_LENGTH} characters of ` +
        '[A-Za-z0-9_-], without "__" and without a leading or trailing "_".',
      { server },
    );
  }
}

/** 8 hex characters of SHA-256 over the original pair (and a round number for collision fallbacks). */
function shortHash(server: string, tool: string, round: number): string {
  const input = JSON.stringify(round === 0 ? [server, tool] : [server, tool, round]);
  return createHash('sha256').update(input, 'utf8').digest('hex').slice(0, HASH_HEX_CHARS);
}

/** Replaces each run of characters outside `[A-Za-z0-9_-]` with a single `_`. */
function sanitize(tool: string): string {
  return tool.replace(UNSAFE_RUN, '_');
}

function hashedName(server: string, tool: string, maxLength: number, round: number): string {
  const prefix = `${PREFIX}${server}${SEPARATOR}`;
  const room = maxLength - prefix.length - SUFFIX_LENGTH;
  // `sanitize` leaves only ASCII, so slicing cannot split a character.
  const base = sanitize(tool).slice(0, Math.max(0, room)).replace(/_+$/, '');
  return `${prefix}${base}_${shortHash(server, tool, round)}`;
}

/**
 * The exposed name of `tool` on `server`: `mcp__{server}__{tool}`. A tool name that is already made of
 * `[A-Za-z0-9_-]` and fits in `maxLength` is kept as is. Otherwise each run of other characters becomes one
 * `_`, the name is cut to fit, and `_` plus 8 hex characters of SHA-256 over the original (server, tool) pair
 * is appended, so distinct tools stay distinct and the same input always gives the same name.
 *
 * The tool part may itself contain `__` or start with `_`: {@link parseToolName} splits at the first `__`
 * after `mcp__`, and since a server name has no `__` and does not end with `_`, that is always the end of the
 * server name. Throws `ConfigError` for an invalid server name or `maxLength`.
 */
export function makeToolName(server: string, tool: string, options: ToolNameOptions = {}): string {
  const maxLength = resolveMaxLength(options.maxLength);
  assertServerName(server);
  const plain = `${PREFIX}${server}${SEPARATOR}${tool}`;
  if (tool.length > 0 && SAFE_NAME.test(tool) && plain.length <= maxLength) return plain;
  return hashedName(server, tool, maxLength, 0);
}

/**
 * Syntactic parse of `mcp__{server}__{tool}`: the server name and the exposed tool part (which is not
 * always the original tool name; use {@link ToolNameRegistry.resolve} for that). `null` when `name` does
 * not have that shape, the server part is not a valid server name, or the tool part is empty.
 */
export function parseToolName(name: string): { server: string; tool: string } | null {
  if (!name.startsWith(PREFIX) || !SAFE_NAME.test(name)) return null;
  const end = name.indexOf(SEPARATOR, PREFIX.length);
  if (end < 0) return null;
  const server = name.slice(PREFIX.length, end);
  const tool = name.slice(end + SEPARATOR.length);
  if (!isValidServerName(server) || tool.length === 0) return null;
  return { server, tool };
}

function codePointLabel(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

const WHITESPACE = /\p{White_Space}/u;
const CONTROL_OR_FORMAT = /[\p{Cc}\p{Cf}]/u;
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Why an original tool name must be refused at discovery, or `undefined` when it is fine. The capability
 * check addresses a tool as `mcp:{server}:{tool}`, so `:` and `*` would change what a pattern means, and
 * invisible characters would let two names look alike to a person reviewing a policy.
 */
export function unsafeToolNameReason(tool: string): string | undefined {
  if (tool.length === 0) return 'the name is empty';
  if (tool.length > MAX_ORIGINAL_TOOL_NAME_LENGTH) {
    return `the name is longer than ${MAX_ORIGINAL_TOOL_NAME_LENGTH} characters (${tool.length})`;
  }
  if (tool.includes(':')) return "the name contains ':', the separator of capability resources";
  if (tool.includes('*')) return "the name contains '*', the wildcard of capability patterns";
  const space = WHITESPACE.exec(tool);
  if (space) return `the name contains whitespace (${codePointLabel(space[0])})`;
  const control = CONTROL_OR_FORMAT.exec(tool);
  if (control)
    return `the name contains an invisible control or format character (${codePointLabel(control[0])})`;
  if (LONE_SURROGATE.test(tool)) return 'the name contains an unpaired surrogate (invalid Unicode)';
  return undefined;
}

/** What {@link ToolNameRegistry.register} assigned. */
export interface ToolNameAssignment {
  /** The exposed name, unique in this registry. */
  name: string;
  /** Present when the natural name was already held by another tool, which keeps it. */
  collision?: { name: string; other: ToolRef };
}

/**
 * The exact map from exposed names to (server, original tool name). Names are assigned by
 * {@link makeToolName}; when that name is already held by a different tool, the newcomer gets a further
 * hashed name and the collision is reported, so both stay reachable and nothing is overwritten.
 */
export class ToolNameRegistry {
  /** Longest name this registry assigns. */
  readonly maxLength: number;
  readonly #byName = new Map<string, ToolRef>();
  readonly #byServer = new Map<string, Map<string, string>>();

  constructor(options: ToolNameOptions = {}) {
    this.maxLength = resolveMaxLength(options.maxLength);
  }

  /** Number of registered tools. */
  get size(): number {
    return this.#byName.size;
  }

  /** Assigns (or returns the already assigned) exposed name of `tool` on `server`. */
  register(server: string, tool: string): ToolNameAssignment {
    const existing = this.nameOf(server, tool);
    if (existing !== undefined) return { name: existing };
    const natural = makeToolName(server, tool, { maxLength: this.maxLength });
    const holder = this.#byName.get(natural);
    let name = natural;
    // A 32-bit hash makes a second round all but impossible; the loop bound only guards against bugs.
    for (let round = 1; this.#byName.has(name); round++) {
      if (round > 1000) {
        throw new ToolSchemaError(`Could not assign a unique exposed name to tool '${tool}'.`, { server });
      }
      name = hashedName(server, tool, this.maxLength, round);
    }
    const ref: ToolRef = Object.freeze({ server, tool });
    this.#byName.set(name, ref);
    let tools = this.#byServer.get(server);
    if (tools === undefined) {
      tools = new Map();
      this.#byServer.set(server, tools);
    }
    tools.set(tool, name);
    return holder === undefined ? { name } : { name, collision: { name: natural, other: holder } };
  }

  /** The (server, original tool name) behind an exposed name this registry assigned; else `undefined`. */
  resolve(name: string): ToolRef | undefined {
    return this.#byName.get(name);
  }

  /** The exposed name assigned to `tool` on `server`, if any. */
  nameOf(server: string, tool: string): string | undefined {
    return this.#byServer.get(server)?.get(tool);
  }

  /** Forgets one tool. Returns whether it was registered. */
  unregister(server: string, tool: string): boolean {
    const tools = this.#byServer.get(server);
    const name = tools?.get(tool);
    if (tools === undefined || name === undefined) return false;
    tools.delete(tool);
    if (tools.size === 0) this.#byServer.delete(server);
    this.#byName.delete(name);
    return true;
  }

  /** Forgets every tool of `server`. Returns the exposed names that were removed. */
  removeServer(server: string): string[] {
    const tools = this.#byServer.get(server);
    if (tools === undefined) return [];
    const removed = [...tools.values()];
    for (const name of removed) this.#byName.delete(name);
    this.#byServer.delete(server);
    return removed;
  }

  /** Every assigned exposed name, in registration order. */
  names(): string[] {
    return [...this.#byName.keys()];
  }

  /**
   * Up to `limit` assigned names that look most like `name`, best first: for suggestions in
   * `ToolNotFoundError`. Compares case-insensitively against the whole name and its tool part, so
   * `read_file` suggests `mcp__fs__read_file`; names that are not close are left out.
   */
  closestNames(name: string, limit = 3): string[] {
    return closestNames(name, this.#byName.keys(), limit);
  }
}

/** Longest query compared, so a huge bogus name cannot make the suggestion search slow. */
const MAX_QUERY_LENGTH = MAX_TOOL_NAME_LENGTH_LIMIT * 2;

function closestNames(query: string, candidates: Iterable<string>, limit: number): string[] {
  if (limit <= 0) return [];
  const q = query.slice(0, MAX_QUERY_LENGTH).toLowerCase();
  if (q.length === 0) return [];
  const scored: { name: string; score: number }[] = [];
  for (const candidate of candidates) {
    // Never the very name asked for: suggesting it back helps nobody.
    if (candidate === query) continue;
    const score = similarity(q, candidate);
    if (score !== undefined) scored.push({ name: candidate, score });
  }
  scored.sort((a, b) => a.score - b.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return scored.slice(0, limit).map((s) => s.name);
}

/** Lower is closer; `undefined` when not close at all. */
function similarity(q: string, candidate: string): number | undefined {
  const full = candidate.toLowerCase();
  const toolPart = parseToolName(candidate)?.tool.toLowerCase() ?? full;
  if (q === full || q === toolPart) return 0;
  const distance = Math.min(levenshtein(q, full), levenshtein(q, toolPart));
  const allowed = Math.max(2, Math.floor(q.length / 3));
  if (distance <= allowed) return distance;
  // A substring match in either direction is a weaker hint than a small edit distance.
  const contains = q.length >= 3 && full.includes(q);
  const contained = toolPart.length >= 3 && q.includes(toolPart);
  if (contains || contained) return allowed + 1 + distance / 1000;
  return undefined;
}

/** Edit distance with two rolling rows. */
function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    [previous, current] = [current, previous];
  }
  return previous[b.length]!;
}
