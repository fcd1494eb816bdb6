/**
 * Tool pinning, the rug-pull defense (issue 3, "Tool pinning"): each tool's definition is pinned by a
 * SHA-256 over its canonical JSON at first discovery; a later, different definition is caught by
 * comparing hashes. Pins persist in a file so approvals survive restarts. The manager wires this into
 * discovery; this module only hashes and stores.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ConfigError, ToolSchemaError } from '../errors.js';
import { isJsonObject } from '../json.js';
import { writePrivateFile } from '../private-file.js';

/** Version of the pin file format. */
export const PIN_FILE_VERSION = 1;

const HASH_RE = /^[0-9a-f]{64}$/;

function kindOf(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'object' && v !== null) return v.constructor?.name ?? 'object';
  return typeof v;
}

/**
 * JSON with object keys sorted (by UTF-16 code units, as RFC 8785), no whitespace. Object properties
 * whose value is `undefined` are left out, as `JSON.stringify` does; anything else that is not JSON
 * (functions, symbols, bigints, non-finite numbers, class instances such as `Date`, cycles, `undefined`
 * in an array) throws `ToolSchemaError`.
 */
export function canonicalJson(value: unknown): string {
  const seen = new Set<object>();
  const walk = (v: unknown, at: string): string => {
    if (v === null) return 'null';
    switch (typeof v) {
      case 'boolean':
        return v ? 'true' : 'false';
      case 'string':
        return JSON.stringify(v);
      case 'number':
        if (Number.isFinite(v)) return JSON.stringify(v);
        break;
      case 'object': {
        if (seen.has(v)) throw new ToolSchemaError(`canonicalJson: the value at ${at} is circular.`);
        const proto = Object.getPrototypeOf(v);
        if (!Array.isArray(v) && proto !== Object.prototype && proto !== null) break;
        seen.add(v);
        let out: string;
        if (Array.isArray(v)) {
          out = `[${v.map((x, i) => walk(x, `${at}[${i}]`)).join(',')}]`;
        } else {
          const obj = v as Record<string, unknown>;
          const parts: string[] = [];
          for (const key of Object.keys(obj).sort()) {
            if (obj[key] !== undefined)
              parts.push(`${JSON.stringify(key)}:${walk(obj[key], `${at}.${key}`)}`);
          }
          out = `{${parts.join(',')}}`;
        }
        seen.delete(v);
        return out;
      }
    }
    throw new ToolSchemaError(`canonicalJson: the value at ${at} is not JSON (${kindOf(v)}).`);
  };
  return walk(value, '$');
}

/**
 * The parts of a tool definition that are pinned: what a person reviews before approving a tool (issue 38: the
 * title and icons too, which a client shows in place of the name).
 */
export interface PinnedToolDefinition {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
  icons?: unknown;
}

/** The pinned parts of `tool`, in one place for the hash and the copy kept with a pin. */
function pinnedFields(tool: PinnedToolDefinition): PinnedToolDefinition {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: tool.annotations,
    icons: tool.icons,
  };
}

/**
 * Hex SHA-256 over the canonical JSON of a tool's name, title, description, input and output schema,
 * annotations and icons. `_meta` does not change the hash.
 *
 * Pins written before the title and icons were pinned (issue 38) hashed the other five fields only. An absent field
 * is left out of the canonical JSON, so for a tool with neither title nor icons both hashes are equal and an old pin
 * still holds; a tool with a title or icons no longer matches its old pin and is reported changed (blocked, by
 * default), with the title and icons in the diff, until someone approves what they now show.
 */
export function toolDefinitionHash(tool: PinnedToolDefinition): string {
  return createHash('sha256')
    .update(canonicalJson(pinnedFields(tool)), 'utf8')
    .digest('hex');
}

/** One pin. */
export interface PinEntry {
  readonly server: string;
  readonly tool: string;
  readonly hash: string;
}

/** How a definition compares with its pin. */
export type PinStatus = 'new' | 'unchanged' | 'changed';

/**
 * The pin file: `{ version: 1, pins: { [server]: { [tool]: hash } }, definitions?: { [server]: { [tool]: def } } }`.
 * `definitions` keeps what each pin was taken from, so a change can be shown as a diff before it is approved.
 */
export interface PinFile {
  version: typeof PIN_FILE_VERSION;
  pins: Record<string, Record<string, string>>;
  definitions?: Record<string, Record<string, PinnedToolDefinition>>;
}

/** The pinned parts of a tool definition (what the hash covers), as plain data. */
export function pinnedPartsOf(tool: PinnedToolDefinition): PinnedToolDefinition {
  return JSON.parse(JSON.stringify(pinnedFields(tool))) as PinnedToolDefinition;
}

/** Lines of a definition part for a diff: pretty JSON with sorted keys, or nothing when absent. */
function linesOf(value: unknown): string[] {
  if (value === undefined) return [];
  if (typeof value === 'string') return value.split('\n');
  return JSON.stringify(JSON.parse(canonicalJson(value)), null, 2).split('\n');
}

/** Most lines a diff shows per part; the rest is summed up. */
const MAX_DIFF_LINES = 200;

/**
 * A readable line diff of two definitions, part by part (title, description, input schema, output schema,
 * annotations, icons): lines starting with `- ` were pinned, `+ ` are new, `  ` are unchanged context. Parts that did
 * not change are left out. With no previous definition (an older pin file), every line is `+ `.
 */
export function toolChangeDiff(
  previous: PinnedToolDefinition | undefined,
  current: PinnedToolDefinition,
): string[] {
  const out: string[] = [];
  for (const part of [
    'title',
    'description',
    'inputSchema',
    'outputSchema',
    'annotations',
    'icons',
  ] as const) {
    const before = linesOf(previous?.[part]);
    const after = linesOf(current[part]);
    if (before.join('\n') === after.join('\n')) continue;
    out.push(`${part}:`);
    const lines = lineDiff(before, after);
    out.push(...lines.slice(0, MAX_DIFF_LINES));
    if (lines.length > MAX_DIFF_LINES) out.push(`  ... ${lines.length - MAX_DIFF_LINES} more lines`);
  }
  return out;
}

/** A longest-common-subsequence line diff (definitions are small; inputs are capped). */
function lineDiff(a: readonly string[], b: readonly string[]): string[] {
  const n = Math.min(a.length, 2_000);
  const m = Math.min(b.length, 2_000);
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push(`  ${a[i]}`);
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push(`- ${a[i++]}`);
    else out.push(`+ ${b[j++]}`);
  }
  while (i < n) out.push(`- ${a[i++]}`);
  while (j < m) out.push(`+ ${b[j++]}`);
  return out;
}

/**
 * A pin that changed: `hash` is the new one (undefined: removed). `origin` is `'local'` for `set`/`delete` in
 * this process and `'shared'` for pins another process wrote, applied by {@link PinStore.sync}.
 */
export interface PinChange {
  readonly server: string;
  readonly tool: string;
  readonly hash: string | undefined;
  readonly previous: string | undefined;
  readonly origin: 'local' | 'shared';
}

function malformedPins(where: string, message: string, cause?: unknown): ConfigError {
  return new ConfigError(
    `The pin file '${where}' is malformed: ${message}. Fix or delete it (deleting re-pins on next discovery).`,
    { file: where, cause, issues: [{ path: '(file)', message }] },
  );
}

/** Pinned definition hashes by server and tool. Maps inside, so no name can touch a prototype. */
export class PinStore {
  readonly #pins = new Map<string, Map<string, string>>();
  readonly #definitions = new Map<string, PinnedToolDefinition>();
  readonly #listeners = new Set<(change: PinChange) => void>();

  /**
   * Listens to pin changes (issue 16: a manager re-checks its blocked tools when another process approved one).
   * Returns the function that stops listening.
   */
  onChange(listener: (change: PinChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Makes this store hold exactly the pins of `file` (a shared copy another process wrote), telling listeners
   * about each difference with origin `'shared'`.
   */
  sync(file: PinFile): void {
    const next = PinStore.fromFile(file, '(shared pins)');
    const changes: PinChange[] = [];
    for (const { server, tool, hash } of this.entries()) {
      if (next.get(server, tool) === undefined) {
        this.#remove(server, tool);
        changes.push({ server, tool, hash: undefined, previous: hash, origin: 'shared' });
      }
    }
    for (const { server, tool, hash } of next.entries()) {
      const previous = this.get(server, tool);
      const definition = next.definition(server, tool);
      if (previous === hash && (definition === undefined || this.definition(server, tool) !== undefined))
        continue;
      this.#put(server, tool, hash, definition);
      if (previous !== hash) changes.push({ server, tool, hash, previous, origin: 'shared' });
    }
    for (const change of changes) this.#emit(change);
  }

  /** The pinned hash, or `undefined`. */
  get(server: string, tool: string): string | undefined {
    return this.#pins.get(server)?.get(tool);
  }

  /** What the pin of `tool` was taken from, when the store kept it. */
  definition(server: string, tool: string): PinnedToolDefinition | undefined {
    return this.#definitions.get(`${server}\u0000${tool}`);
  }

  /** Pins (or re-pins, after approval) a tool's definition hash, keeping the definition when given. */
  set(server: string, tool: string, hash: string, definition?: PinnedToolDefinition): void {
    if (typeof server !== 'string' || typeof tool !== 'string' || !HASH_RE.test(hash)) {
      throw new ConfigError(
        `A pin needs a server, a tool and a lowercase hex SHA-256; got hash '${String(hash)}'.`,
      );
    }
    const previous = this.get(server, tool);
    this.#put(server, tool, hash, definition);
    this.#emit({ server, tool, hash, previous, origin: 'local' });
  }

  /** Removes a pin; returns whether there was one. */
  delete(server: string, tool: string): boolean {
    const previous = this.get(server, tool);
    const had = this.#remove(server, tool);
    if (had) this.#emit({ server, tool, hash: undefined, previous, origin: 'local' });
    return had;
  }

  #put(server: string, tool: string, hash: string, definition: PinnedToolDefinition | undefined): void {
    let tools = this.#pins.get(server);
    if (tools === undefined) {
      tools = new Map();
      this.#pins.set(server, tools);
    }
    tools.set(tool, hash);
    const key = `${server}\u0000${tool}`;
    if (definition !== undefined) this.#definitions.set(key, pinnedPartsOf(definition));
    else this.#definitions.delete(key);
  }

  #remove(server: string, tool: string): boolean {
    const tools = this.#pins.get(server);
    const had = tools?.delete(tool) ?? false;
    this.#definitions.delete(`${server}\u0000${tool}`);
    if (tools?.size === 0) this.#pins.delete(server);
    return had;
  }

  #emit(change: PinChange): void {
    for (const listener of this.#listeners) listener(change);
  }

  /** Compares a definition hash with the pin. */
  compare(server: string, tool: string, hash: string): PinStatus {
    const pinned = this.get(server, tool);
    return pinned === undefined ? 'new' : pinned === hash ? 'unchanged' : 'changed';
  }

  /** Every pin, sorted by server then tool. */
  entries(): readonly PinEntry[] {
    const out: PinEntry[] = [];
    for (const server of [...this.#pins.keys()].sort()) {
      const tools = this.#pins.get(server)!;
      for (const tool of [...tools.keys()].sort())
        out.push(Object.freeze({ server, tool, hash: tools.get(tool)! }));
    }
    return Object.freeze(out);
  }

  /** The pin file contents. Objects have no prototype, so a tool named `__proto__` stays data. */
  toJSON(): PinFile {
    const pins = Object.create(null) as Record<string, Record<string, string>>;
    const definitions = Object.create(null) as Record<string, Record<string, PinnedToolDefinition>>;
    for (const { server, tool, hash } of this.entries()) {
      let tools = pins[server];
      if (tools === undefined) {
        tools = Object.create(null) as Record<string, string>;
        pins[server] = tools;
      }
      tools[tool] = hash;
      const definition = this.definition(server, tool);
      if (definition !== undefined) {
        definitions[server] ??= Object.create(null) as Record<string, PinnedToolDefinition>;
        (definitions[server] as Record<string, PinnedToolDefinition>)[tool] = definition;
      }
    }
    return Object.keys(definitions).length === 0
      ? { version: PIN_FILE_VERSION, pins }
      : { version: PIN_FILE_VERSION, pins, definitions };
  }

  /** Reads a pin file. A missing file is an empty store; a malformed one throws `ConfigError` naming it. */
  static async load(path: string): Promise<PinStore> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new PinStore();
      throw new ConfigError(`Cannot read the pin file '${path}': ${(err as Error).message}`, {
        file: path,
        cause: err,
      });
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw malformedPins(path, 'it is not valid JSON', err);
    }
    return PinStore.fromFile(data, path);
  }

  /**
   * A store holding the pins of a parsed pin file (`where` names it in errors). Throws `ConfigError` when the file
   * is malformed; kept definitions count only if they hash to their pin.
   */
  static fromFile(file: unknown, where: string): PinStore {
    const bad = (message: string): ConfigError => malformedPins(where, message);
    if (!isJsonObject(file)) throw bad('it is not an object');
    if (file.version !== PIN_FILE_VERSION) throw bad(`version must be ${PIN_FILE_VERSION}`);
    const pins = file.pins;
    if (!isJsonObject(pins)) throw bad('pins must be an object');
    const store = new PinStore();
    for (const [server, tools] of Object.entries(pins)) {
      if (!isJsonObject(tools)) {
        throw bad(`pins.${server} must be an object`);
      }
      for (const [tool, hash] of Object.entries(tools)) {
        if (typeof hash !== 'string' || !HASH_RE.test(hash)) {
          throw bad(`pins.${server}.${tool} must be a lowercase hex SHA-256`);
        }
        const definition = (file.definitions as Record<string, Record<string, unknown>> | undefined)?.[
          server
        ]?.[tool];
        // A kept definition counts only if it is the one the hash was taken from.
        const usable =
          typeof definition === 'object' &&
          definition !== null &&
          (() => {
            try {
              return toolDefinitionHash(definition as PinnedToolDefinition) === hash;
            } catch {
              return false;
            }
          })();
        store.set(server, tool, hash, usable ? (definition as PinnedToolDefinition) : undefined);
      }
    }
    return store;
  }

  /** Writes the pin file atomically (temp file, fsync, rename) with mode 0600. */
  async save(path: string): Promise<void> {
    try {
      await writePrivateFile(path, `${JSON.stringify(this.toJSON(), null, 2)}\n`);
    } catch (err) {
      throw new ConfigError(`Cannot save the pin file '${path}': ${(err as Error).message}`, {
        file: path,
        cause: err,
      });
    }
  }
}
