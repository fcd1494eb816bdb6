/**
 * The manager's tool catalog: the exact map from exposed name to (server, original tool), the wrappers handed
 * out, and how a server's tool list (live or offline) is merged in. Wrappers are kept across refreshes, so one
 * handed out before a reconnect keeps working after it.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { ToolNameRegistry, unsafeToolNameReason } from '../tools/names.js';
import {
  type ToolAnnotations,
  type ToolDefinition,
  type ToolInvoker,
  ToolWrapper,
} from '../tools/tool-wrapper.js';
import { compileInputValidator, type InputValidator, normalizeInputSchema } from '../tools/validate.js';
import type { ToolFilter } from './config.js';
import { toolPassesFilter } from './config.js';

/** What the catalog keeps per exposed tool. */
export interface CatalogEntry {
  wrapper: ToolWrapper;
  /** Compiled lazily at the first call: servers may list many tools that are never called. */
  validator: InputValidator | undefined;
}

/** What a merge changed, by exposed name, plus what it refused. */
export interface CatalogChange {
  added: string[];
  removed: string[];
  changed: string[];
  refused: { tool: string; reason: string }[];
  collisions: { tool: string; name: string; other: { server: string; tool: string } }[];
}

/** The shape a tool arrives in, live (`tools/list`) or offline (`registerTools`). */
export type RawTool = Pick<
  Tool,
  'name' | 'description' | 'inputSchema' | 'outputSchema' | 'annotations' | 'title'
>;

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
  merge(
    server: string,
    tools: readonly RawTool[],
    options: { offline: boolean; filter?: ToolFilter | undefined },
  ): CatalogChange {
    const change: CatalogChange = { added: [], removed: [], changed: [], refused: [], collisions: [] };
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
      next.add(registered.name);
      const existing = this.#entries.get(registered.name);
      if (existing === undefined) {
        this.#entries.set(registered.name, {
          wrapper: new ToolWrapper(definition, this.#invoker),
          validator: undefined,
        });
        change.added.push(registered.name);
      } else {
        if (definitionChanged(existing.wrapper.definition, definition)) {
          change.changed.push(registered.name);
          existing.validator = undefined;
        }
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
}

function toDefinition(name: string, server: string, raw: RawTool, offline: boolean): ToolDefinition {
  return Object.freeze({
    name,
    server,
    tool: raw.name,
    title: raw.title ?? raw.annotations?.title,
    description: raw.description ?? '',
    inputSchema: deepFreeze(normalizeInputSchema(raw.inputSchema as Record<string, unknown>)),
    outputSchema: raw.outputSchema === undefined ? undefined : deepFreeze(structuredClone(raw.outputSchema)),
    annotations:
      raw.annotations === undefined
        ? undefined
        : (deepFreeze(structuredClone(raw.annotations)) as ToolAnnotations),
    offline,
  });
}

function definitionChanged(a: ToolDefinition, b: ToolDefinition): boolean {
  return (
    a.description !== b.description ||
    a.title !== b.title ||
    JSON.stringify(a.inputSchema) !== JSON.stringify(b.inputSchema) ||
    JSON.stringify(a.outputSchema) !== JSON.stringify(b.outputSchema) ||
    JSON.stringify(a.annotations) !== JSON.stringify(b.annotations)
  );
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
