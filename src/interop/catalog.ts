/**
 * The manager's tool catalog: the exact map from exposed name to (server, original tool), the wrappers handed
 * out, and how a server's tool list (live or offline) is merged in. Wrappers are kept across refreshes, so one
 * handed out before a reconnect keeps working after it.
 */
import type { Tool } from '@modelcontextprotocol/client';
import type { ToolFilter } from '../config/servers.js';
import { toolPassesFilter } from '../config/servers.js';
import { ToolDefinitionChangedError } from '../errors.js';
import {
  type PinnedToolDefinition,
  type PinStore,
  pinnedPartsOf,
  toolChangeDiff,
  toolDefinitionHash,
} from '../security/pinning.js';
import { ToolNameRegistry, unsafeToolNameReason } from '../tools/names.js';
import {
  type ToolAnnotations,
  type ToolDefinition,
  type ToolIcon,
  type ToolInvoker,
  ToolWrapper,
} from '../tools/tool-wrapper.js';
import {
  compileInputValidator,
  compileOutputValidator,
  type InputValidator,
  normalizeInputSchema,
  type OutputValidator,
} from '../tools/validate.js';

/** What the catalog keeps per exposed tool. */
export interface CatalogEntry {
  wrapper: ToolWrapper;
  /** SHA-256 of the tool's canonical definition as the server sent it (see security/pinning). */
  hash: string;
  /** Set while a changed definition awaits approval (`onToolChange: 'block'`), with what changed. */
  blocked: { pinned: string; current: string; definition: PinnedToolDefinition } | undefined;
  /** What the pin covers of a live tool (to re-check it when a pin changes elsewhere); undefined offline. */
  pinned: PinnedToolDefinition | undefined;
  /** Compiled lazily at the first call: servers may list many tools that are never called. */
  validator: InputValidator | undefined;
  /** The output schema's validator, compiled once per definition at the first call (when it has one). */
  outputValidator: OutputValidator | undefined;
}

/** What a merge changed, by exposed name, plus what it refused. */
export interface CatalogChange {
  added: string[];
  removed: string[];
  changed: string[];
  refused: { tool: string; reason: string }[];
  collisions: { tool: string; name: string; other: { server: string; tool: string } }[];
  /** Definitions that differ from their pin, and what was done about it. */
  pinChanges: {
    name: string;
    tool: string;
    pinned: string;
    current: string;
    action: 'blocked' | 'warned' | 'accepted';
    /** What changed since the pin, as {@link toolChangeDiff} shows it. */
    diff: string[];
  }[];
}

/** How a merge treats pins: live tools are pinned and checked; offline ones are not (no server vouched). */
export interface MergeOptions {
  offline: boolean;
  filter?: ToolFilter | undefined;
  pins?: PinStore | undefined;
  onToolChange?: 'block' | 'warn' | 'accept' | undefined;
}

/** The shape a tool arrives in, live (`tools/list`) or offline (`registerTools`). */
export type RawTool = Pick<Tool, 'name' | 'description' | 'annotations' | 'title' | 'icons'> & {
  /** JSON Schemas are read loosely here: `normalizeInputSchema` and the validator check them. */
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema?: { [key: string]: unknown } | undefined;
};

export class ToolCatalog {
  readonly #entries = new Map<string, CatalogEntry>();
  readonly #byServer = new Map<string, Set<string>>();
  readonly #names: ToolNameRegistry;
  readonly #invoker: ToolInvoker;

  constructor(invoker: ToolInvoker, maxToolNameLength: number) {
    this.#invoker = invoker;
    this.#names = new ToolNameRegistry({ maxLength: maxToolNameLength });
  }

  get(name: string): CatalogEntry | undefined {
    return this.#entries.get(name);
  }

  /** Every wrapper, in a stable order (by server, then by discovery order). */
  wrappers(): ToolWrapper[] {
    const out: ToolWrapper[] = [];
    for (const names of this.#byServer.values()) {
      for (const name of names) {
        const entry = this.#entries.get(name);
        if (entry !== undefined) out.push(entry.wrapper);
      }
    }
    return out;
  }

  serverTools(server: string): ToolWrapper[] {
    const names = this.#byServer.get(server);
    if (names === undefined) return [];
    return [...names].map((n) => (this.#entries.get(n) as CatalogEntry).wrapper);
  }

  closestNames(name: string): string[] {
    return this.#names.closestNames(name, 3);
  }

  /**
   * Replaces `server`'s tools with `tools`. Existing wrappers of tools still present are updated in place;
   * tools gone are removed; unsafe names are refused; the server's `tools` filter applies.
   */
  merge(server: string, tools: readonly RawTool[], options: MergeOptions): CatalogChange {
    const change: CatalogChange = {
      added: [],
      removed: [],
      changed: [],
      refused: [],
      collisions: [],
      pinChanges: [],
    };
    const previous = this.#byServer.get(server) ?? new Set<string>();
    const next = new Set<string>();
    const seenOriginal = new Set<string>();
    for (const raw of tools) {
      const reason = unsafeToolNameReason(raw.name);
      if (reason !== undefined) {
        change.refused.push({ tool: raw.name, reason });
        continue;
      }
      if (seenOriginal.has(raw.name)) {
        change.refused.push({ tool: raw.name, reason: 'the server listed this tool name twice' });
        continue;
      }
      seenOriginal.add(raw.name);
      if (!toolPassesFilter(options.filter, raw.name)) continue;
      const registered = this.#names.register(server, raw.name);
      if (registered.collision !== undefined) {
        change.collisions.push({ tool: raw.name, name: registered.name, other: registered.collision.other });
      }
      const definition = toDefinition(registered.name, server, raw, options.offline);
      const hash = toolDefinitionHash(raw);
      const blocked = options.offline
        ? undefined
        : this.#checkPin(server, registered.name, raw, hash, options, change);
      const pinned = options.offline || options.pins === undefined ? undefined : pinnedPartsOf(raw);
      next.add(registered.name);
      const existing = this.#entries.get(registered.name);
      if (existing === undefined) {
        this.#entries.set(registered.name, {
          wrapper: new ToolWrapper(definition, this.#invoker),
          hash,
          blocked,
          pinned,
          validator: undefined,
          outputValidator: undefined,
        });
        change.added.push(registered.name);
      } else {
        if (existing.hash !== hash || existing.wrapper.title !== definition.title) {
          change.changed.push(registered.name);
          // Validators belong to one definition (the hash covers both schemas): compiled again at the next call.
          existing.validator = undefined;
          existing.outputValidator = undefined;
        }
        existing.hash = hash;
        existing.blocked = blocked;
        existing.pinned = pinned;
        existing.wrapper._update(definition);
      }
    }
    for (const name of previous) {
      if (next.has(name)) continue;
      const entry = this.#entries.get(name);
      this.#entries.delete(name);
      if (entry !== undefined) this.#names.unregister(server, entry.wrapper.tool);
      change.removed.push(name);
    }
    this.#byServer.set(server, next);
    return change;
  }

  /**
   * Compares a live definition with its pin (MCP rug-pull defense). The first sighting pins it; a change is
   * blocked, warned about or accepted per the server's `onToolChange`. Pins are keyed by server and original
   * tool name, so a tool that shadows another server's exposed name inherits nothing.
   */
  #checkPin(
    server: string,
    name: string,
    raw: RawTool,
    hash: string,
    options: MergeOptions,
    change: CatalogChange,
  ): CatalogEntry['blocked'] {
    const pins = options.pins;
    if (pins === undefined) return undefined;
    const tool = raw.name;
    const pinned = pins.get(server, tool);
    if (pinned === undefined) {
      pins.set(server, tool, hash, raw);
      return undefined;
    }
    if (pinned === hash) {
      // Pins from older files carry no definition: keep this one, which the hash says is the pinned one.
      if (pins.definition(server, tool) === undefined) pins.set(server, tool, hash, raw);
      return undefined;
    }
    const mode = options.onToolChange ?? 'block';
    const definition = pinnedPartsOf(raw);
    const diff = toolChangeDiff(pins.definition(server, tool), definition);
    if (mode === 'block') {
      change.pinChanges.push({ name, tool, pinned, current: hash, action: 'blocked', diff });
      return { pinned, current: hash, definition };
    }
    pins.set(server, tool, hash, raw);
    change.pinChanges.push({
      name,
      tool,
      pinned,
      current: hash,
      diff,
      action: mode === 'warn' ? 'warned' : 'accepted',
    });
    return undefined;
  }

  /**
   * Approves a blocked definition change, bound to what was reviewed: `hash` (or a prefix of at least 12 hex
   * digits) must be the blocked definition's. Re-pins it and keeps it as the pinned definition. False when
   * nothing was blocked; throws `TOOL_DEFINITION_CHANGED` when the definition now differs from the one reviewed.
   */
  approve(name: string, pins: PinStore, hash: string): boolean {
    const entry = this.#entries.get(name);
    const blocked = entry?.blocked;
    if (entry === undefined || blocked === undefined) return false;
    if (!(typeof hash === 'string' && hash.length >= 12 && blocked.current.startsWith(hash.toLowerCase()))) {
      throw new ToolDefinitionChangedError(name, blocked.pinned, blocked.current, {
        server: entry.wrapper.server,
        message: `The definition of '${name}' awaiting approval is ${blocked.current.slice(0, 12)}, not the ${String(hash).slice(0, 12)} that was reviewed: it changed again, or the hash is wrong. Review the change again and approve the hash it shows.`,
      });
    }
    pins.set(entry.wrapper.server, entry.wrapper.tool, blocked.current, blocked.definition);
    entry.blocked = undefined;
    return true;
  }

  /**
   * Re-checks a live tool against its pin after the pin changed in another process (issue 16, shared pins): a
   * definition that now matches is unblocked; one that no longer does is blocked when `onToolChange` is `block`.
   * A removed pin changes nothing (the next discovery pins again). Returns what was done, if anything.
   */
  recheckPin(
    server: string,
    tool: string,
    pins: PinStore,
    onToolChange: MergeOptions['onToolChange'],
  ):
    | { name: string; action: 'unblocked' | 'blocked'; pinned: string; current: string; diff: string[] }
    | undefined {
    const entry = [...(this.#byServer.get(server) ?? [])]
      .map((name) => this.#entries.get(name))
      .find((e) => e?.wrapper.tool === tool);
    const pinnedHash = pins.get(server, tool);
    if (entry?.pinned === undefined || pinnedHash === undefined) return undefined;
    const name = entry.wrapper.name;
    if (pinnedHash === entry.hash) {
      if (entry.blocked === undefined) return undefined;
      entry.blocked = undefined;
      return { name, action: 'unblocked', pinned: pinnedHash, current: entry.hash, diff: [] };
    }
    if ((onToolChange ?? 'block') !== 'block') return undefined;
    entry.blocked = { pinned: pinnedHash, current: entry.hash, definition: entry.pinned };
    const diff = toolChangeDiff(pins.definition(server, tool), entry.pinned);
    return { name, action: 'blocked', pinned: pinnedHash, current: entry.hash, diff };
  }

  /** Removes every tool of `server`. */
  removeServer(server: string): string[] {
    const names = this.#byServer.get(server);
    if (names === undefined) return [];
    for (const name of names) this.#entries.delete(name);
    this.#names.removeServer(server);
    this.#byServer.delete(server);
    return [...names];
  }

  /** The entry's validator, compiled on first use. */
  validatorOf(entry: CatalogEntry): InputValidator {
    entry.validator ??= compileInputValidator(entry.wrapper.inputSchema as Record<string, unknown>, {
      toolName: entry.wrapper.name,
      server: entry.wrapper.server,
    });
    return entry.validator;
  }

  /** The entry's output validator, compiled on first use; undefined when the tool has no output schema. */
  outputValidatorOf(entry: CatalogEntry): OutputValidator | undefined {
    const schema = entry.wrapper.outputSchema;
    if (schema === undefined) return undefined;
    entry.outputValidator ??= compileOutputValidator(schema as Record<string, unknown>, {
      toolName: entry.wrapper.name,
      server: entry.wrapper.server,
    });
    return entry.outputValidator;
  }
}

function toDefinition(name: string, server: string, raw: RawTool, offline: boolean): ToolDefinition {
  return Object.freeze({
    name,
    server,
    tool: raw.name,
    title: raw.title ?? raw.annotations?.title,
    description: raw.description ?? '',
    icons: safeIcons(raw.icons),
    inputSchema: deepFreeze(normalizeInputSchema(raw.inputSchema as Record<string, unknown>)),
    outputSchema: raw.outputSchema === undefined ? undefined : deepFreeze(structuredClone(raw.outputSchema)),
    annotations:
      raw.annotations === undefined
        ? undefined
        : (deepFreeze(structuredClone(raw.annotations)) as ToolAnnotations),
    offline,
  });
}

/**
 * The icons worth passing on: `https:` or `data:image/` sources only (MCP 2026-07-28 basic, "Icons": clients MUST
 * reject unsafe schemes such as `javascript:` and `file:`), copied and frozen. Undefined when none is left.
 */
function safeIcons(icons: unknown): readonly ToolIcon[] | undefined {
  if (!Array.isArray(icons)) return undefined;
  const kept: ToolIcon[] = [];
  for (const icon of icons) {
    if (typeof icon !== 'object' || icon === null || typeof icon.src !== 'string') continue;
    if (!/^(?:https:\/\/|data:image\/)/i.test(icon.src)) continue;
    const { src, mimeType, sizes, theme } = icon as Record<string, unknown>;
    kept.push(
      Object.freeze({
        src: src as string,
        ...(typeof mimeType === 'string' ? { mimeType } : {}),
        ...(Array.isArray(sizes) ? { sizes: Object.freeze(sizes.filter((x) => typeof x === 'string')) } : {}),
        ...(theme === 'light' || theme === 'dark' ? { theme } : {}),
      }),
    );
  }
  return kept.length === 0 ? undefined : Object.freeze(kept);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
