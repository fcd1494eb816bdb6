/**
 * The console's live view of decisions (issue 41): a tap on the gateway's audit sink that keeps the latest
 * decisions in a bounded ring and hands each new one to the open live views. With the fleet's store it follows the
 * Redis audit stream instead ({@link AuditFeed.follow}), so decisions of every replica show.
 */
import { ConfigError } from '../../errors.js';
import type { AccessRequest, AuditRecord, AuditSink } from '../../security/types.js';

/** One decision as the console shows it. */
export interface FeedEntry {
  /** A number that grows with each entry this process saw (the order of the live view). */
  readonly seq: number;
  readonly record: AuditRecord;
}

/** What the live view filters on; an empty field matches everything. */
export interface FeedFilter {
  principal?: string | undefined;
  tool?: string | undefined;
  rule?: string | undefined;
}

/** Whether `record` passes `filter` (exact matches on principal and rule id; the tool by its name or resource). */
export function matchesFilter(record: AuditRecord, filter: FeedFilter): boolean {
  if (filter.principal && record.principal !== filter.principal) return false;
  if (filter.rule && record.ruleId !== filter.rule) return false;
  if (filter.tool) {
    const names = [record.tool, record.resource, `mcp__${record.server}__${record.tool}`];
    if (!names.includes(filter.tool)) return false;
  }
  return true;
}

/** The bounded ring of recent decisions, and the live views listening for new ones. */
export class AuditFeed {
  readonly #capacity: number;
  readonly #ring: FeedEntry[] = [];
  readonly #listeners = new Set<(entry: FeedEntry) => void>();
  #seq = 0;
  #following: { stop: () => void } | undefined;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /**
   * A sink that records into this feed, then into `sink` (the gateway's own audit): what `sink` does with a
   * record (and whether it fails) is unchanged.
   */
  tee(sink: AuditSink | undefined): AuditSink {
    return {
      write: (record: AuditRecord, request?: AccessRequest) => {
        // While the feed follows the fleet's stream, this process's records come back through it.
        if (this.#following === undefined) this.push(record);
        return sink?.write(record, request);
      },
      ...(sink?.close === undefined ? {} : { close: () => (sink.close as () => Promise<void>)() }),
    };
  }

  /** Adds one decision (newest last) and tells the live views. */
  push(record: AuditRecord): void {
    const entry = { seq: ++this.#seq, record };
    this.#ring.push(entry);
    if (this.#ring.length > this.#capacity) this.#ring.shift();
    for (const listener of this.#listeners) listener(entry);
  }

  /** The recent decisions that pass `filter`, newest first. */
  recent(filter: FeedFilter = {}): FeedEntry[] {
    return this.#ring.filter((e) => matchesFilter(e.record, filter)).reverse();
  }

  /** Calls `listener` with each new decision until the returned function is called. */
  subscribe(listener: (entry: FeedEntry) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Reads the fleet's audit stream (written by every replica's `StreamAuditSink`) every `intervalMs` instead of
   * this process's decisions, so the live view shows every replica's. Starts with the stream's latest entries.
   */
  follow(stream: StreamTail, name: string, intervalMs = 1_000): void {
    if (this.#following !== undefined) return;
    let after: string | undefined;
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const read = async () => {
      try {
        for (const entry of await stream.tailStream(name, after, this.#capacity)) {
          after = entry.id;
          const record = parseRecord(entry.fields.record);
          if (record !== undefined) this.push(record);
        }
      } catch {
        // The store is unreachable for now: the next read tries again from the same entry.
      }
      if (!stopped) timer = setTimeout(read, intervalMs).unref();
    };
    this.#following = {
      stop: () => {
        stopped = true;
        clearTimeout(timer);
      },
    };
    void read();
  }

  close(): void {
    this.#following?.stop();
    this.#listeners.clear();
  }
}

/** What {@link AuditFeed.follow} reads: the fleet store's stream tail (`RedisStateStore.tailStream`). */
export interface StreamTail {
  tailStream(
    stream: string,
    after: string | undefined,
    count?: number,
  ): Promise<{ id: string; fields: Record<string, string> }[]>;
}

/** A stream entry's audit record; `undefined` for a checkpoint or an entry that is not a record. */
function parseRecord(text: string | undefined): AuditRecord | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return undefined;
    const record = value as Partial<AuditRecord>;
    if (typeof record.resource !== 'string' || typeof record.action !== 'string') return undefined;
    if (typeof record.time !== 'string' || typeof record.allowed !== 'boolean') return undefined;
    return {
      reason: '',
      argumentKeys: [],
      effect: record.allowed ? 'allow' : 'deny',
      ...record,
    } as AuditRecord;
  } catch {
    return undefined;
  }
}

/**
 * With `gateway.console.auditStream` and the fleet's store, the feed follows that stream. A store that cannot
 * tail a stream (not Redis) is refused: the operator asked for every replica's decisions and would not get them.
 */
export function followFleet(
  feed: AuditFeed | undefined,
  stream: string | undefined,
  store: object | undefined,
): void {
  if (feed === undefined || stream === undefined) return;
  if (store === undefined || typeof (store as Partial<StreamTail>).tailStream !== 'function') {
    throw new ConfigError(
      `gateway.console.auditStream '${stream}' needs the fleet's Redis store (state.redis) to read the stream from.`,
      { issues: [{ path: 'gateway.console.auditStream', message: "needs the fleet's Redis store" }] },
    );
  }
  feed.follow(store as StreamTail, stream);
}
