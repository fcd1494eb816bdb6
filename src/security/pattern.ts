/**
 * Resources, patterns and how they match (issue 3, "Model").
 *
 * A resource is a string of `:`-separated segments whose first segment is a known scheme. A pattern has
 * the same shape; inside a segment `*` matches any run of characters except `:`, and a final segment
 * `**` matches the rest, colons included. Inside the URI of an `mcp-resource` pattern, the final segment
 * may also end with `**` (`file:///data/**`): that segment's prefix, then the rest, colons included.
 * Nothing else is special: in a resource, `*` and `?` are data. Segments are compared whole, so
 * `mcp:git:*` can never match `mcp:github:x`.
 */
import { PolicyError } from '../errors.js';

/** The known resource schemes and the actions each accepts (besides `*`, any action). */
export const SCHEME_ACTIONS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  // `request`: what a server asks of us, on `mcp:{server}:elicitation`, `:sampling` and `:roots` (issue 13).
  // `read`: a skill's files, on `mcp:{server}:skill:{name}` (issue 42, the Skills extension).
  mcp: Object.freeze(['execute', 'request', 'read']),
  'mcp-resource': Object.freeze(['read']),
  'mcp-prompt': Object.freeze(['get']),
  tool: Object.freeze(['execute']),
});

/** Fewest segments a resource of each scheme has (`mcp:{server}:{tool}` has three). A Map: no prototype keys. */
const MIN_SEGMENTS: ReadonlyMap<string, number> = new Map([
  ['mcp', 3],
  ['mcp-resource', 3],
  ['mcp-prompt', 3],
  ['tool', 2],
]);

/** The actions valid for `scheme` (without `*`), or `undefined` for an unknown scheme. */
export function schemeActions(scheme: string): readonly string[] | undefined {
  return Object.hasOwn(SCHEME_ACTIONS, scheme) ? SCHEME_ACTIONS[scheme] : undefined;
}

/** Longest pattern accepted in a rule. */
export const MAX_PATTERN_LENGTH = 4096;
/** Longest resource a check accepts; a longer one is denied as malformed. */
export const MAX_RESOURCE_LENGTH = 16_384;

// Control, format (zero-width, bidi), line/paragraph separators and lone surrogates. No tool name or
// URI needs them, and they are how look-alike names hide: a resource holding one is always denied.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;
// A `.` or `..` path segment, plain or percent-encoded, in a resource URI.
const DOT_SEGMENT = /(?:^|[/\\])(?:\.|%2e){1,2}(?:[/\\?#]|$)/i;
const EDGE_SPACE = /^\s|\s$/;

/** True when every character is printable ASCII (space to `~`). */
function isPrintableAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

/** One segment of a compiled pattern: a literal, a lone `*`, or another glob. */
interface Segment {
  readonly text: string;
  readonly glob: boolean;
  readonly star: boolean;
}

/** A validated, precompiled pattern. */
export interface CompiledPattern {
  readonly source: string;
  readonly scheme: string;
  /** Whole segments after the scheme, without a final segment that ends with `**`. */
  readonly segments: readonly Segment[];
  /**
   * For a pattern ending with `**`: the glob its final segment must match (the text before `**`, plus
   * `*`); the rest of the resource, colons included, is then free. `undefined` otherwise.
   */
  readonly tail: string | undefined;
  /** The literal second segment (server, or native tool name), or `undefined` when it is a wildcard. */
  readonly key: string | undefined;
  /** The whole pattern when it has no wildcard: it matches exactly that resource. */
  readonly exact: string | undefined;
  /** The literal text before the first `*`: every resource matched starts with it. */
  readonly prefix: string;
  /** Index of the first segment with a `*` (the ones before lie inside `prefix`). */
  readonly firstGlob: number;
  /** Where segment `firstGlob` starts in a matching resource. */
  readonly globPos: number;
}

/**
 * The resource string a capability check names, built in this one place for everything Interlock gates (issue 15).
 * A server name that would shift the segments (a `:`, invisible characters, empty) is refused with `INVALID_POLICY`.
 */
export const resourceFor = Object.freeze({
  /** `mcp:{server}:{tool}`: an MCP tool (action `execute`). */
  tool(server: string, tool: string): string {
    return `mcp:${checkServer(server)}:${tool}`;
  },
  /** `mcp-resource:{server}:{uri}`: an MCP resource read through the manager (action `read`). */
  resource(server: string, uri: string): string {
    return `mcp-resource:${checkServer(server)}:${uri}`;
  },
  /** `mcp-prompt:{server}:{name}`: an MCP prompt (action `get`). */
  prompt(server: string, name: string): string {
    return `mcp-prompt:${checkServer(server)}:${name}`;
  },
  /**
   * `mcp:{server}:{kind}`: a request a server makes of Interlock while serving a call (action `request`);
   * `kind` is `elicitation`, `sampling` or `roots`.
   */
  serverRequest(server: string, kind: string): string {
    return `mcp:${checkServer(server)}:${kind}`;
  },
  /**
   * `mcp:{server}:skill:{name}`: a skill a server serves through the Skills extension (action `read`, for each of its
   * files). `name` is the skill's path (`pdf-processing`, or `acme/billing/refunds` for a nested skill): one segment,
   * so a name with `:` or invisible characters is refused with `INVALID_POLICY`.
   */
  skill(server: string, name: string): string {
    if (typeof name !== 'string' || name === '' || name.includes(':') || INVISIBLE.test(name)) {
      throw new PolicyError(
        `Skill name ${display(name)} cannot be used in a resource: it must be non-empty, without ':' or invisible characters.`,
      );
    }
    return `mcp:${checkServer(server)}:skill:${name}`;
  },
  /** `tool:{name}`: a native (in-process) tool (action `execute`). */
  nativeTool(name: string): string {
    return `tool:${name}`;
  },
});

function checkServer(server: string): string {
  // A colon in a server name would shift every later segment: `mcp:a:b:c` must mean one thing.
  if (typeof server !== 'string' || server === '' || server.includes(':') || INVISIBLE.test(server)) {
    throw new PolicyError(
      `Server name ${display(server)} cannot be used in a resource: it must be non-empty, without ':' or invisible characters.`,
    );
  }
  return server;
}

/** Why a pattern is malformed, or `undefined` when it is fine. Shared by {@link compilePattern}. */
function patternProblem(pattern: string, parts: readonly string[]): string | undefined {
  const scheme = parts[0] ?? '';
  const min = MIN_SEGMENTS.get(scheme);
  if (min === undefined) {
    return `unknown scheme '${display(scheme)}'; known schemes are ${Object.keys(SCHEME_ACTIONS).join(', ')}`;
  }
  if (INVISIBLE.test(pattern)) {
    return 'it contains control, zero-width or other invisible characters, which no resource may hold, so it can never match';
  }
  if (EDGE_SPACE.test(pattern)) return 'it starts or ends with whitespace';
  const last = parts.length - 1;
  for (let i = 1; i <= last; i++) {
    const seg = parts[i] ?? '';
    const uriTail = scheme === 'mcp-resource' && i >= 2 && i === last && /^[^*]*(?:\*[^*]+)*\*\*$/.test(seg);
    if (seg.includes('**') && !(seg === '**' && i === last) && !uriTail) {
      return `'**' may only end a pattern, as a whole final segment or at the end of a URI (segment ${i + 1} is '${display(seg)}')`;
    }
    // Inside a URI (after `mcp-resource:{server}:{first}`) colons are data: `http://[::1]/` is fine.
    if (scheme === 'mcp-resource' && i > 2) continue;
    if (seg === '') return `segment ${i + 1} is empty`;
    if (EDGE_SPACE.test(seg)) return `segment ${i + 1} starts or ends with whitespace`;
  }
  const ends = (parts[last] ?? '').endsWith('**');
  if (!ends && parts.length < min) {
    const example = `${pattern}${':*'.repeat(min - parts.length)}`;
    return `a '${scheme}' resource has at least ${min} segments, so this can never match (did you mean '${example}'?)`;
  }
  if (scheme === 'mcp-resource' && parts.length > 2) {
    const uri = parts.slice(2).join(':').replace(/\*\*$/, '');
    if (uri === '' && !ends) return 'the URI part is empty';
    if (DOT_SEGMENT.test(uri)) {
      return "the URI has a '.' or '..' segment; resources with one are always denied, so this can never match";
    }
    const encoding = uri.includes('%') ? encodingProblem(uri) : undefined;
    if (encoding !== undefined) {
      return `${encoding.replace(/^its URI/, 'the URI')} (resources spelled so are always denied, so this can never match)`;
    }
  }
  return undefined;
}

/** Validates and compiles a pattern. Throws `PolicyError` naming the problem when it is malformed. */
export function compilePattern(pattern: string): CompiledPattern {
  if (typeof pattern !== 'string' || pattern === '') {
    throw new PolicyError('A pattern must be a non-empty string.', { pattern: String(pattern) });
  }
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw new PolicyError(`Pattern is longer than ${MAX_PATTERN_LENGTH} characters.`, {
      pattern: pattern.slice(0, 64),
    });
  }
  const parts = pattern.split(':');
  const problem = patternProblem(pattern, parts);
  if (problem !== undefined) {
    throw new PolicyError(`Invalid pattern '${display(pattern)}': ${problem}.`, { pattern });
  }
  const final = parts[parts.length - 1] ?? '';
  const tail = final.endsWith('**') ? `${final.slice(0, -2)}*` : undefined;
  const segments = parts
    .slice(1, tail !== undefined ? -1 : undefined)
    .map((text) => Object.freeze({ text, glob: text.includes('*'), star: text === '*' }));
  const second = segments[0];
  let firstGlob = 0;
  let globPos = parts[0]!.length + 1;
  while (firstGlob < segments.length && !segments[firstGlob]!.glob)
    globPos += segments[firstGlob++]!.text.length + 1;
  return Object.freeze({
    source: pattern,
    scheme: parts[0] ?? '',
    segments: Object.freeze(segments),
    tail,
    key: second !== undefined && !second.glob ? second.text : undefined,
    exact: pattern.includes('*') ? undefined : pattern,
    prefix: pattern.includes('*') ? pattern.slice(0, pattern.indexOf('*')) : pattern,
    firstGlob,
    globPos,
  });
}

/**
 * Why a resource is malformed, or `undefined` when it is well formed. A malformed resource is denied
 * whatever the rules say.
 */
export function resourceProblem(resource: string): string | undefined {
  if (typeof resource !== 'string' || resource === '') return 'it is empty or not a string';
  if (resource.length > MAX_RESOURCE_LENGTH) return `it is longer than ${MAX_RESOURCE_LENGTH} characters`;
  // Fast path: printable ASCII holds nothing invisible; only other text pays for the Unicode check.
  if (!isPrintableAscii(resource) && INVISIBLE.test(resource)) {
    return 'it contains control, zero-width or other invisible characters';
  }
  const first = resource.indexOf(':');
  if (first < 0) return "it has no scheme (expected 'scheme:...')";
  const scheme = resource.slice(0, first);
  const min = MIN_SEGMENTS.get(scheme);
  if (min === undefined) return `unknown scheme '${display(scheme)}'`;
  const second = resource.indexOf(':', first + 1);
  if (min === 2) return first === resource.length - 1 ? 'the name is empty' : undefined;
  if (second < 0 || second === first + 1 || second === resource.length - 1) {
    return `a '${scheme}' resource is '${scheme}:{server}:{name}' with a non-empty server and name`;
  }
  if (scheme === 'mcp-resource') {
    const uri = resource.slice(second + 1);
    if (DOT_SEGMENT.test(uri)) return "its URI has a '.' or '..' segment; normalize the URI first";
    if (uri.includes('%')) return encodingProblem(uri);
  }
  return undefined;
}

// Bytes a URI must percent-encode: everything else has one plain spelling, and a URI that encodes it anyway
// could pass a pattern written plainly while the server reads the same path (`%2e%2e%2f`, `%73ecret`).
const MUST_ENCODE = new Set([0x20, 0x22, 0x25, 0x3c, 0x3e, 0x5e, 0x60, 0x7b, 0x7c, 0x7d]);
const PERCENT = /%([0-9A-Fa-f]{2})?/g;

/**
 * The percent-encoding of a resource URI, checked strictly and decoded once: an encoded separator (`%2f`, `%5c`),
 * an encoded character that has a plain spelling, double encoding (`%252e`), a malformed escape or invalid
 * UTF-8 makes the resource malformed (always denied), and the decoded URI must have no dot segment.
 */
function encodingProblem(uri: string): string | undefined {
  for (const m of uri.matchAll(PERCENT)) {
    const hex = m[1];
    if (hex === undefined) return "its URI has a '%' that is not followed by two hex digits";
    const byte = Number.parseInt(hex, 16);
    if (byte === 0x2f || byte === 0x5c) {
      return `its URI encodes a path separator (%${hex}), which servers read differently; it is ambiguous`;
    }
    if (byte < 0x80 && !MUST_ENCODE.has(byte) && byte >= 0x20 && byte !== 0x7f) {
      return `its URI encodes '${String.fromCharCode(byte)}' as %${hex}; write it plainly`;
    }
    if (byte === 0x25 && /^%25[0-9A-Fa-f]{2}/.test(uri.slice(m.index))) {
      return 'its URI is percent-encoded twice (%25 followed by an escape)';
    }
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(uri);
  } catch {
    return 'its URI has percent-encoding that is not valid UTF-8';
  }
  if (INVISIBLE.test(decoded)) return 'its URI encodes control, zero-width or other invisible characters';
  if (DOT_SEGMENT.test(decoded)) return "its URI has a '.' or '..' segment once decoded";
  return undefined;
}

/** The scheme and second segment of a well-formed resource, for index lookups. */
export function resourceKey(resource: string): { scheme: string; key: string } {
  const first = resource.indexOf(':');
  const second = resource.indexOf(':', first + 1);
  return {
    scheme: resource.slice(0, first),
    key: second < 0 ? resource.slice(first + 1) : resource.slice(first + 1, second),
  };
}

/** True when the compiled pattern matches the (well-formed) resource. */
export function matchPattern(p: CompiledPattern, resource: string): boolean {
  if (p.exact !== undefined) return resource === p.exact;
  const prefix = p.prefix;
  if (resource.length < prefix.length) return false;
  // A loop of charCodeAt beats startsWith here (no builtin call for a short prefix).
  for (let i = prefix.length - 1; i >= 0; i--)
    if (resource.charCodeAt(i) !== prefix.charCodeAt(i)) return false;
  // The literal segments before the first glob lie inside the prefix, so they already matched.
  let pos = p.globPos;
  const segs = p.segments;
  for (let i = p.firstGlob; i < segs.length; i++) {
    const seg = segs[i]!;
    let end = resource.indexOf(':', pos);
    if (end < 0) end = resource.length;
    if (seg.star) {
      // a lone `*` takes the whole segment
    } else if (
      seg.glob ? !matchGlob(seg.text, resource, pos, end) : !literalAt(seg.text, resource, pos, end)
    ) {
      return false;
    }
    if (end === resource.length) return i === segs.length - 1 && p.tail === undefined;
    pos = end + 1;
  }
  // Whole segments are used up and the resource goes on after a ':'. Only a final `**` takes the rest:
  // the next segment must match the tail glob (`*` for a plain `**`), and anything may follow.
  const tail = p.tail;
  if (tail === undefined) return false;
  if (tail === '*') return true;
  let end = resource.indexOf(':', pos);
  if (end < 0) end = resource.length;
  return matchGlob(tail, resource, pos, end);
}

function literalAt(text: string, s: string, start: number, end: number): boolean {
  if (end - start !== text.length) return false;
  for (let i = 0; i < text.length; i++) if (s.charCodeAt(start + i) !== text.charCodeAt(i)) return false;
  return true;
}

/**
 * Glob match of `glob` (where only `*` is special, matching any run, possibly empty) against
 * `s[start, end)`, which holds no ':'. Greedy two-pointer algorithm: O(len * glob) at worst, never
 * exponential. Characters of `s`, including `*`, are data.
 */
export function matchGlob(glob: string, s: string, start = 0, end = s.length): boolean {
  let g = 0;
  let i = start;
  let star = -1;
  let mark = 0;
  while (i < end) {
    if (g < glob.length && glob.charCodeAt(g) !== 42 && glob.charCodeAt(g) === s.charCodeAt(i)) {
      g++;
      i++;
    } else if (g < glob.length && glob.charCodeAt(g) === 42 /* * */) {
      star = g++;
      mark = i;
    } else if (star >= 0) {
      g = star + 1;
      i = ++mark;
    } else {
      return false;
    }
  }
  while (g < glob.length && glob.charCodeAt(g) === 42) g++;
  return g === glob.length;
}

/**
 * True when every resource `child` matches is also matched by `parent` (language inclusion). Used by
 * `derive` to refuse a child rule wider than its parent. Segment inclusion for `*`-only globs: `parent`
 * covers `child` exactly when `parent` matches `child`'s text with `child`'s `*` taken as a character
 * only a `*` of `parent` can consume.
 */
export function patternCovers(parent: CompiledPattern, child: CompiledPattern): boolean {
  if (parent.scheme !== child.scheme) return false;
  const ps = parent.segments;
  const cs = child.segments;
  if (parent.tail === undefined) {
    if (child.tail !== undefined || cs.length !== ps.length) return false;
  } else {
    // `parent` fixes ps.length segments and needs one more matching its tail glob; then anything.
    if (cs.length < ps.length || (cs.length === ps.length && child.tail === undefined)) return false;
    const next = cs.length > ps.length ? cs[ps.length]!.text : child.tail!;
    if (!matchGlob(parent.tail, next)) return false;
  }
  for (let i = 0; i < ps.length; i++) {
    if (!matchGlob(ps[i]!.text, cs[i]!.text)) return false;
  }
  return true;
}

/** A string made safe to embed in a message: invisible characters escaped, long text cut. */
export function display(value: unknown): string {
  const s = typeof value === 'string' ? value : String(value);
  if (s.length <= 200 && isPrintableAscii(s)) return s;
  const cut = s.length > 200 ? `${s.slice(0, 200)}…` : s;
  return cut.replace(
    /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A description without its final full stop, to sit inside a sentence. */
export function trimStop(text: string): string {
  return text.replace(/[.\s]+$/, '');
}
