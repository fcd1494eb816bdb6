/**
 * The console's live view of decisions (issue 41): a tap on the gateway's audit sink that keeps the latest
 * decisions in a bounded ring and hands each new one to the open live views.
 */
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
        this.push(record);
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

  close(): void {
    this.#listeners.clear();
  }
}
