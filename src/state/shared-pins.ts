/**
 * Tool pins for a fleet (issue 16): one pin document in the state store, kept in sync with a `PinStore` in each
 * process. A first sighting, a re-pin or an approval in one process is written under a lock and broadcast; every
 * other process applies it to its `PinStore`, whose manager then re-checks the tools concerned (an approval
 * unblocks them everywhere; a conflicting first sighting blocks them). The first pin written wins: two processes
 * that first see different definitions of a tool end up with one pin, and the other definition is blocked.
 */
import { tupleKey } from '../json.js';
import { type PinChange, type PinFile, type PinnedToolDefinition, PinStore } from '../security/pinning.js';
import type { StateStore } from './types.js';

/** How often a process also reads the pin document, in case it missed a broadcast. */
export const DEFAULT_PINS_POLL_MS = 5_000;

/** Options of {@link SharedPins.open}. */
export interface SharedPinsOptions {
  /** The pin document's name: processes share pins by name. @default 'default' */
  name?: string | undefined;
  /**
   * The store kept in sync (give it to the manager as `pins`). Its pins, e.g. loaded from a pin file, are added
   * to the shared document where it has none. @default a new, empty `PinStore`
   */
  pins?: PinStore | undefined;
  /** How often the document is read besides the broadcast; 0 turns it off. @default 5 000 ms */
  pollMs?: number | undefined;
  /** Told when a write or a read failed (the store is down); writes are tried again on the next change or poll. */
  onError?: ((error: unknown) => void) | undefined;
}

interface PinDocument {
  version: number;
  file: PinFile;
}

interface PendingPin {
  hash: string | undefined;
  /** The pin this process had before; undefined means a first sighting, which never replaces another's pin. */
  previous: string | undefined;
  definition: PinnedToolDefinition | undefined;
}

/** Pins shared through a {@link StateStore}. Create it with {@link SharedPins.open}. */
export class SharedPins implements AsyncDisposable {
  /** The pins of this process, kept in sync with the fleet's: give them to the manager (`pins`). */
  readonly pins: PinStore;
  readonly #store: StateStore;
  readonly #name: string;
  readonly #onError: (error: unknown) => void;
  readonly #pending = new Map<string, { server: string; tool: string; pin: PendingPin }>();
  #version = 0;
  #writing: Promise<void> = Promise.resolve();
  #unwatch: (() => void) | undefined;
  #unsubscribe: (() => Promise<void>) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  private constructor(store: StateStore, name: string, pins: PinStore, onError: (e: unknown) => void) {
    this.#store = store;
    this.#name = name;
    this.pins = pins;
    this.#onError = onError;
  }

  /** Loads the shared pins (adding this process's own where the document has none) and follows every change. */
  static async open(store: StateStore, options: SharedPinsOptions = {}): Promise<SharedPins> {
    const shared = new SharedPins(
      store,
      options.name ?? 'default',
      options.pins ?? new PinStore(),
      options.onError ?? (() => {}),
    );
    shared.#unsubscribe = await store.subscribe(shared.#key, () => void shared.#refreshQuietly());
    shared.#unwatch = shared.pins.onChange((change) => shared.#local(change));
    try {
      for (const entry of shared.pins.entries()) shared.#queueFirstSighting(entry.server, entry.tool);
      const document = await shared.#read();
      if (document !== undefined) shared.#apply(document);
      await shared.flush();
    } catch (err) {
      await shared.close();
      throw err;
    }
    const pollMs = options.pollMs ?? DEFAULT_PINS_POLL_MS;
    if (pollMs > 0) {
      shared.#timer = setInterval(() => void shared.#refreshQuietly(), pollMs);
      shared.#timer.unref();
    }
    return shared;
  }

  /** The document version this process has applied (0 before any pin was shared). */
  get version(): number {
    return this.#version;
  }

  /** Writes this process's pin changes not yet in the store, and waits for it. Throws `STATE_UNAVAILABLE`. */
  flush(): Promise<void> {
    const run = this.#writing.then(() => this.#write());
    this.#writing = run.catch(() => {});
    return run;
  }

  /**
   * Reads the document and applies it if it is newer. A store that lost it (restarted without persistence) gets
   * this process's pins back as first sightings. Also writes pending changes.
   */
  async refresh(): Promise<void> {
    if (this.#closed) return;
    const document = await this.#read();
    if (document === undefined && this.#version > 0) {
      for (const entry of this.pins.entries()) this.#queueFirstSighting(entry.server, entry.tool);
    } else if (document !== undefined && document.version > this.#version) this.#apply(document);
    if (this.#pending.size > 0) await this.flush();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#unwatch?.();
    await this.#unsubscribe?.().catch(() => undefined);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  get #key(): string {
    return `pins:${this.#name}`;
  }

  #refreshQuietly(): Promise<void> {
    return this.refresh().catch(this.#onError);
  }

  /** A pin set or removed in this process: queued for the store, written soon. */
  #local(change: PinChange): void {
    if (change.origin !== 'local' || this.#closed) return;
    const key = tupleKey(change.server, change.tool);
    const before = this.#pending.get(key)?.pin.previous;
    const previous = this.#pending.has(key) ? before : change.previous;
    const definition =
      change.hash === undefined ? undefined : this.pins.definition(change.server, change.tool);
    this.#pending.set(key, {
      server: change.server,
      tool: change.tool,
      pin: { hash: change.hash, previous, definition },
    });
    void this.flush().catch(this.#onError);
  }

  #queueFirstSighting(server: string, tool: string): void {
    const key = tupleKey(server, tool);
    if (this.#pending.has(key)) return;
    const hash = this.pins.get(server, tool);
    if (hash === undefined) return;
    this.#pending.set(key, {
      server,
      tool,
      pin: { hash, previous: undefined, definition: this.pins.definition(server, tool) },
    });
  }

  async #write(): Promise<void> {
    if (this.#pending.size === 0 || this.#closed) return;
    const batch = [...this.#pending.entries()];
    const document = await this.#store.withLock(this.#key, async () => {
      const current = await this.#read();
      const view = PinStore.fromFile(current?.file ?? { version: 1, pins: {} }, '(shared pins)');
      for (const [, { server, tool, pin }] of batch) overlay(view, server, tool, pin);
      // Versions only grow, even when the store lost the document (a restart without persistence).
      const next: PinDocument = {
        version: Math.max(current?.version ?? 0, this.#version) + 1,
        file: view.toJSON(),
      };
      await this.#store.set(this.#key, JSON.stringify(next));
      return next;
    });
    // Changes made while writing stay queued for the next write.
    for (const [key, entry] of batch) if (this.#pending.get(key) === entry) this.#pending.delete(key);
    this.#apply(document);
    await this.#store.publish(this.#key, String(document.version));
  }

  async #read(): Promise<PinDocument | undefined> {
    const text = await this.#store.get(this.#key);
    return text === undefined ? undefined : (JSON.parse(text) as PinDocument);
  }

  /** Makes the local pins those of `document`, with this process's unwritten changes on top. */
  #apply(document: PinDocument): void {
    if (document.version < this.#version) return;
    const view = PinStore.fromFile(document.file, '(shared pins)');
    for (const { server, tool, pin } of this.#pending.values()) overlay(view, server, tool, pin);
    this.#version = document.version;
    this.pins.sync(view.toJSON());
  }
}

/** Applies one change of this process onto the shared view: a first sighting never replaces another's pin. */
function overlay(view: PinStore, server: string, tool: string, pin: PendingPin): void {
  const current = view.get(server, tool);
  if (pin.hash === undefined) {
    if (current === pin.previous) view.delete(server, tool);
    return;
  }
  if (pin.previous === undefined && current !== undefined && current !== pin.hash) return;
  view.set(server, tool, pin.hash, pin.definition);
}
