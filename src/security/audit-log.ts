/**
 * Decision logs through the OpenTelemetry logs API (issue 16): one log record per audit record, with the record's
 * stable JSON shape as the body and the same `interlock.*` attributes as the span events, so an OpenTelemetry
 * Collector can ship every decision wherever logs go. Without a registered logger provider it costs nothing.
 * With `chain` (issue 40) the body carries the chain fields, they are attributes too (`interlock.chain.*`), and
 * signed checkpoints are log records of their own (`interlock.audit.checkpoint`): the shipped logs verify as a file.
 */
import { type Logger, logs, SeverityNumber } from '@opentelemetry/api-logs';
import { auditAttributes } from './audit.js';
import { AuditChain, type AuditChainOptions, type AuditCheckpoint } from './audit-chain.js';
import type { AuditRecord, AuditSink } from './types.js';

/** The event name of decision log records. */
export const DECISION_LOG_EVENT = 'interlock.capability.decision';
/** The event name of a chain's checkpoint log records. */
export const CHECKPOINT_LOG_EVENT = 'interlock.audit.checkpoint';

/** Options of an {@link OpenTelemetryLogAuditSink}. */
export interface OpenTelemetryLogAuditSinkOptions {
  /** @default `logs.getLogger('interlock')` (the global provider; a no-op until one is registered) */
  logger?: Logger | undefined;
  /** Chain the records and emit signed checkpoints (issue 40). @default off */
  chain?: AuditChainOptions | undefined;
}

/** Emits each audit record as an OpenTelemetry log record: INFO when allowed, WARN when refused. */
export class OpenTelemetryLogAuditSink implements AuditSink, AsyncDisposable {
  readonly #logger: Logger | undefined;
  readonly #chain: AuditChain | undefined;

  constructor(options: OpenTelemetryLogAuditSinkOptions = {}) {
    this.#logger = options.logger;
    this.#chain =
      options.chain === undefined ? undefined : new AuditChain(options.chain, (cp) => this.#checkpoint(cp));
  }

  /** The id of this sink's chain, when it chains its records. */
  get chainId(): string | undefined {
    return this.#chain?.id;
  }

  write(record: AuditRecord): void {
    // Looked up per write, so a provider registered after the sink was made is still used.
    const logger = this.#logger ?? logs.getLogger('interlock');
    const linked = this.#chain?.link(record);
    const attributes = auditAttributes(record);
    if (linked !== undefined) {
      const { id, seq, prev, hash } = linked.entry.chain;
      attributes['interlock.chain.id'] = id;
      attributes['interlock.chain.seq'] = seq;
      attributes['interlock.chain.prev'] = prev;
      attributes['interlock.chain.hash'] = hash;
    }
    logger.emit({
      eventName: DECISION_LOG_EVENT,
      severityNumber: record.allowed ? SeverityNumber.INFO : SeverityNumber.WARN,
      severityText: record.allowed ? 'INFO' : 'WARN',
      timestamp: Date.parse(record.time),
      body: JSON.stringify(linked?.entry ?? record),
      attributes,
    });
    if (linked?.checkpoint !== undefined) this.#checkpoint(linked.checkpoint);
  }

  #checkpoint(checkpoint: AuditCheckpoint): void {
    (this.#logger ?? logs.getLogger('interlock')).emit({
      eventName: CHECKPOINT_LOG_EVENT,
      severityNumber: SeverityNumber.INFO,
      severityText: 'INFO',
      timestamp: Date.parse(checkpoint.time),
      body: JSON.stringify({ checkpoint }),
      attributes: {
        'interlock.chain.id': checkpoint.chain,
        'interlock.chain.seq': checkpoint.seq,
        'interlock.chain.head': checkpoint.head,
        'interlock.chain.final': checkpoint.final,
      },
    });
  }

  /** Emits the chain's final checkpoint (once). Safe to call twice. */
  async close(): Promise<void> {
    const final = this.#chain?.close();
    if (final !== undefined) this.#checkpoint(final);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
