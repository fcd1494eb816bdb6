/**
 * What the manager tells the world about its tool catalog: it merges a server's tool list (live, offline, after a
 * refresh or a pin changed elsewhere) into the {@link ToolCatalog} and reports the change as events and log lines
 * (`tools_changed`, `tool_refused`, `tool_definition_changed`, `tool_name_collision`, warnings). It also answers
 * which tools a capability set could allow and which are blocked by a changed pin.
 */

import type { MCPServerConfig } from '../config/servers.js';
import { InterlockError } from '../errors.js';
import type { CapabilitySet } from '../security/capability-set.js';
import { resourceFor } from '../security/pattern.js';
import { type PinnedToolDefinition, type PinStore, toolChangeDiff } from '../security/pinning.js';
import type { CheckContext } from '../security/types.js';
import type { ToolWrapper } from '../tools/tool-wrapper.js';
import type { CatalogChange, RawTool, ToolCatalog } from './catalog.js';
import type { ServerConnection } from './connection.js';
import type { MCPManagerEvents, TypedEvents } from './events.js';
import type { Logger } from './logger.js';

/** A tool whose definition changed since it was pinned, with what changed: calls are blocked until approved. */
export interface BlockedToolChange {
  name: string;
  server: string;
  tool: string;
  /** The hash pinned (and approved) before. */
  pinnedHash: string;
  /** The hash of the definition awaiting approval: give it to `approveToolChange`. */
  currentHash: string;
  /** The pinned definition, when the pin store kept it (pin files written by older versions did not). */
  previous: PinnedToolDefinition | undefined;
  /** The definition awaiting approval (its pinned parts). */
  current: PinnedToolDefinition;
  /** A line diff of description, schemas and annotations: `- ` pinned, `+ ` new. */
  diff: string[];
}

/** What a {@link CatalogReporter} works with. */
export interface CatalogReporterDeps {
  catalog: ToolCatalog;
  pins: PinStore;
  events: TypedEvents<MCPManagerEvents>;
  logger: Logger;
  /** The config of a server, whatever its state; undefined for one never connected. */
  configOf(server: string): MCPServerConfig | undefined;
  /** The ready connection of `server`, or NOT_CONNECTED at once (refreshes never wait). */
  live(server: string): ServerConnection;
  /** Whether `connection` is still the one registered for its server (not replaced or disconnected). */
  isCurrent(connection: ServerConnection): boolean;
}

/** Merges tool lists into the catalog and reports what changed. */
export class CatalogReporter {
  readonly #deps: CatalogReporterDeps;
  readonly #refreshing = new Map<string, Promise<void>>();
  readonly #refreshAgain = new Set<string>();

  constructor(deps: CatalogReporterDeps) {
    this.#deps = deps;
  }

  /** Merges a live server's discovered tools (pins checked) and reports what changed. */
  mergeLive(connection: ServerConnection, emitChange = true): void {
    const change = this.#deps.catalog.merge(connection.name, connection.tools, {
      offline: false,
      filter: connection.config.tools,
      pins: this.#deps.pins,
      onToolChange: connection.config.onToolChange,
    });
    this.#report(connection.name, change, emitChange);
  }

  /** Merges offline tool schemas (no pins: no server vouched for them) and reports what changed. */
  mergeOffline(server: string, tools: readonly RawTool[]): ToolWrapper[] {
    const change = this.#deps.catalog.merge(server, tools, {
      offline: true,
      filter: this.#deps.configOf(server)?.tools,
    });
    this.#report(server, change, true);
    return this.#deps.catalog.serverTools(server);
  }

  /** Removes every tool of a server that was disconnected, reporting them as removed. */
  removeServer(server: string): void {
    const removed = this.#deps.catalog.removeServer(server);
    if (removed.length > 0)
      this.#deps.events.emit('tools_changed', { server, added: [], removed, changed: [] });
  }

  /** Refreshes on `notifications/tools/list_changed`; bursts collapse into one follow-up refresh. */
  scheduleRefresh(server: string): void {
    if (this.#refreshing.has(server)) {
      this.#refreshAgain.add(server);
      return;
    }
    const run = this.refresh(server)
      .catch((error: Error) =>
        this.#deps.events.emit('warning', {
          server,
          code: error instanceof InterlockError ? error.code : 'REFRESH_FAILED',
          message: `Refreshing the tools of '${server}' failed: ${error.message}`,
        }),
      )
      .finally(() => {
        this.#refreshing.delete(server);
        if (this.#refreshAgain.delete(server)) this.scheduleRefresh(server);
      });
    this.#refreshing.set(server, run);
  }

  /** Fetches `server`'s tool list again and merges it; wrappers handed out before stay valid. */
  async refresh(server: string): Promise<void> {
    const connection = this.#deps.live(server);
    const listed = await connection.relistTools();
    if (!listed || !this.#deps.isCurrent(connection)) return;
    this.mergeLive(connection);
  }

  /** A pin changed elsewhere: unblocks the tool if it now matches, blocks it if it no longer does. */
  pinChanged(server: string, tool: string): void {
    const onToolChange = this.#deps.configOf(server)?.onToolChange;
    const done = this.#deps.catalog.recheckPin(server, tool, this.#deps.pins, onToolChange);
    if (done === undefined) return;
    if (done.action === 'unblocked') {
      this.#deps.logger.info(`the definition of '${done.name}' was approved in another process`, { server });
      return;
    }
    this.#report(
      server,
      {
        added: [],
        removed: [],
        changed: [],
        refused: [],
        collisions: [],
        pinChanges: [{ ...done, tool, action: 'blocked' }],
      },
      false,
    );
  }

  /**
   * The tools `capabilities` could allow for `context` (and that are not blocked by a changed pin), so a model is
   * not shown tools it can never call.
   */
  visibleTools(capabilities: CapabilitySet, context: CheckContext | undefined): ToolWrapper[] {
    const catalog = this.#deps.catalog;
    return catalog.wrappers().filter((wrapper) => {
      if (catalog.get(wrapper.name)?.blocked !== undefined) return false;
      const ctx =
        context === undefined
          ? { annotations: wrapper.annotations }
          : { ...context, annotations: wrapper.annotations };
      return capabilities.couldAllow(resourceFor.tool(wrapper.server, wrapper.tool), 'execute', ctx);
    });
  }

  /** Tools whose definition changed since it was pinned, with what changed. */
  blockedTools(): BlockedToolChange[] {
    const { catalog, pins } = this.#deps;
    return catalog.wrappers().flatMap((wrapper) => {
      const blocked = catalog.get(wrapper.name)?.blocked;
      if (blocked === undefined) return [];
      const previous = pins.definition(wrapper.server, wrapper.tool);
      return [
        {
          name: wrapper.name,
          server: wrapper.server,
          tool: wrapper.tool,
          pinnedHash: blocked.pinned,
          currentHash: blocked.current,
          previous,
          current: blocked.definition,
          diff: toolChangeDiff(previous, blocked.definition),
        },
      ];
    });
  }

  /** Approves a blocked definition change bound to the reviewed `hash` (see `MCPClientManager.approveToolChange`). */
  approve(name: string, hash: string): boolean {
    const approved = this.#deps.catalog.approve(name, this.#deps.pins, hash);
    if (approved) this.#deps.logger.info(`approved the new definition of '${name}' (${hash.slice(0, 12)})`);
    return approved;
  }

  #report(server: string, change: CatalogChange, emitChange: boolean): void {
    const { events, logger } = this.#deps;
    for (const refused of change.refused) {
      logger.warn(`refused tool of '${server}': ${refused.reason}`, { server });
      events.emit('tool_refused', { server, tool: refused.tool, reason: refused.reason });
      events.emit('warning', {
        server,
        code: 'TOOL_REFUSED',
        message: `Tool ${JSON.stringify(refused.tool)} of server '${server}' was refused: ${refused.reason}`,
      });
    }
    for (const p of change.pinChanges) {
      events.emit('tool_definition_changed', {
        server,
        tool: p.tool,
        name: p.name,
        pinnedHash: p.pinned,
        currentHash: p.current,
        action: p.action,
        diff: p.diff,
      });
      if (p.action !== 'accepted') {
        const what =
          p.action === 'blocked'
            ? `calls are blocked until the change is reviewed and approved (manager.approveToolChange('${p.name}', '${p.current.slice(0, 12)}'))`
            : 'the new definition was pinned (onToolChange: warn)';
        logger.warn(`tool '${p.name}' changed its definition; ${what}`, { server });
        events.emit('warning', {
          server,
          code: 'TOOL_DEFINITION_CHANGED',
          message: `Tool '${p.name}' of server '${server}' changed its definition since it was pinned; ${what}.`,
        });
      }
    }
    for (const c of change.collisions) {
      events.emit('tool_name_collision', { server, tool: c.tool, name: c.name, other: c.other });
    }
    const changed = change.added.length + change.removed.length + change.changed.length > 0;
    if (emitChange && changed) {
      events.emit('tools_changed', {
        server,
        added: change.added,
        removed: change.removed,
        changed: change.changed,
      });
    }
  }
}
