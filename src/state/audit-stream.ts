/**
 * Decision logs out to a shared stream (issue 16): every audit record, in the same JSON shape the JSON-lines sink
 * writes, appended to a bounded stream of the state store (a Redis stream with `RedisStateStore`), where any
 * consumer (`XREAD`, a Collector, a SIEM shipper) can read the decisions of the whole fleet.
 */
import type { AuditRecord, AuditSink } from '../security/types.js';
import { DEFAULT_STREAM_MAX_LENGTH, type StateStore } from './types.js';

/** Options of a {@link StreamAuditSink}. */
export interface StreamAuditSinkOptions {
  /** The stream name (under the store's key prefix). @default 'audit' */
  stream?: string | undefined;
  /** How many records the stream keeps (approximately, for Redis). @default DEFAULT_STREAM_MAX_LENGTH */
  maxLength?: number | undefined;
}

/**
 * Appends each record as `{ record: <JSON> }`. A failing store fails the write, so the gate's `auditFailure`
 * setting decides whether the call goes on (`block`, the default, refuses it).
 */
export class StreamAuditSink implements AuditSink {
  readonly #store: StateStore;
  readonly #stream: string;
  readonly #maxLength: number;

  constructor(store: StateStore, options: StreamAuditSinkOptions = {}) {
    this.#store = store;
    this.#stream = options.stream ?? 'audit';
    this.#maxLength = options.maxLength ?? DEFAULT_STREAM_MAX_LENGTH;
  }

  write(record: AuditRecord): Promise<void> {
    return this.#store.append(this.#stream, { record: JSON.stringify(record) }, this.#maxLength);
  }
}
