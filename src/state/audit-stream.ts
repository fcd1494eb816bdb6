/**
 * Decision logs out to a shared stream (issue 16): every audit record, in the same JSON shape the JSON-lines sink
 * writes, appended to a bounded stream of the state store (a Redis stream with `RedisStateStore`), where any
 * consumer (`XREAD`, a Collector, a SIEM shipper) can read the decisions of the whole fleet. With `chain`
 * (issue 40) each process's records form their own chain in the stream, with signed checkpoints between them.
 */
import { AuditError } from '../errors.js';
import { AuditChain, type AuditChainOptions, type AuditCheckpoint } from '../security/audit-chain.js';
import type { AuditTrailEntry } from '../security/audit-verify.js';
import type { AuditRecord, AuditSink } from '../security/types.js';
import type { RedisStateStore } from './redis.js';
import { DEFAULT_STREAM_MAX_LENGTH, type StateStore } from './types.js';

/** Options of a {@link StreamAuditSink}. */
export interface StreamAuditSinkOptions {
  /** The stream name (under the store's key prefix). @default 'audit' */
  stream?: string | undefined;
  /** How many records the stream keeps (approximately, for Redis). @default DEFAULT_STREAM_MAX_LENGTH */
  maxLength?: number | undefined;
  /**
   * Chain this process's records (issue 40): each entry's record carries a chain id, a sequence number and the hash
   * of the one before; signed checkpoints go in as `{ checkpoint: <JSON> }` entries. @default off
   */
  chain?: AuditChainOptions | undefined;
}

/**
 * Appends each record as `{ record: <JSON> }`. A failing store fails the write, so the gate's `auditFailure`
 * setting decides whether the call goes on (`block`, the default, refuses it). `close()` writes a chain's final
 * checkpoint; the store stays open (it belongs to the caller).
 */
export class StreamAuditSink implements AuditSink, AsyncDisposable {
  readonly #store: StateStore;
  readonly #stream: string;
  readonly #maxLength: number;
  readonly #chain: AuditChain | undefined;
  #closed = false;

  constructor(store: StateStore, options: StreamAuditSinkOptions = {}) {
    this.#store = store;
    this.#stream = options.stream ?? 'audit';
    this.#maxLength = options.maxLength ?? DEFAULT_STREAM_MAX_LENGTH;
    // A timed checkpoint that fails to append is covered by the next one.
    this.#chain =
      options.chain === undefined
        ? undefined
        : new AuditChain(options.chain, (cp) => void this.#checkpoint(cp).catch(() => undefined));
  }

  /** The id of this sink's chain, when it chains its records. */
  get chainId(): string | undefined {
    return this.#chain?.id;
  }

  write(record: AuditRecord): Promise<void> {
    if (this.#chain === undefined) {
      return this.#store.append(this.#stream, { record: JSON.stringify(record) }, this.#maxLength);
    }
    const { entry, checkpoint } = this.#chain.link(record);
    // Both appends are sent in order on one connection, so the checkpoint lands after its record.
    const appended = this.#store.append(this.#stream, { record: JSON.stringify(entry) }, this.#maxLength);
    if (checkpoint === undefined) return appended;
    const signed = this.#checkpoint(checkpoint);
    return Promise.all([appended, signed]).then(() => undefined);
  }

  #checkpoint(checkpoint: AuditCheckpoint): Promise<void> {
    return this.#store.append(this.#stream, { checkpoint: JSON.stringify(checkpoint) }, this.#maxLength);
  }

  /** Writes the chain's final checkpoint (once). Safe to call twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const final = this.#chain?.close();
    if (final === undefined) return;
    await this.#checkpoint(final).catch((err: unknown) => {
      throw new AuditError(
        `The final checkpoint of the audit chain in stream '${this.#stream}' could not be written.`,
        {
          cause: err,
        },
      );
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** A stream's audit entries, ready for `verifyAuditChain`. */
export interface AuditStreamTrail {
  /** Each entry's record or checkpoint, located by its stream id. */
  readonly entries: readonly AuditTrailEntry[];
  /**
   * Whether entries may have been trimmed from the head (more were added than the stream holds, and more than
   * `maxLength`): pass it as `trimmedHead`.
   */
  readonly trimmedHead: boolean;
}

/** Reads the audit entries of a Redis stream written by {@link StreamAuditSink}s, oldest first. */
export async function readAuditStream(
  store: RedisStateStore,
  options: Pick<StreamAuditSinkOptions, 'stream' | 'maxLength'> = {},
): Promise<AuditStreamTrail> {
  const { entries, added } = await store.readStream(options.stream ?? 'audit');
  const maxLength = options.maxLength ?? DEFAULT_STREAM_MAX_LENGTH;
  const out = entries.map(({ id, fields }): AuditTrailEntry => {
    const at = `stream id ${id}`;
    const text = fields.checkpoint ?? fields.record;
    if (text === undefined)
      return { at, value: undefined, unreadable: 'neither a record nor a checkpoint field' };
    try {
      const parsed: unknown = JSON.parse(text);
      return { at, value: fields.checkpoint === undefined ? parsed : { checkpoint: parsed } };
    } catch {
      return { at, value: undefined, unreadable: 'not valid JSON' };
    }
  });
  return { entries: out, trimmedHead: added !== undefined && added > entries.length && added > maxLength };
}
