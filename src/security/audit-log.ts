/**
 * Decision logs through the OpenTelemetry logs API (issue 16): one log record per audit record, with the record's
 * stable JSON shape as the body and the same `interlock.*` attributes as the span events, so an OpenTelemetry
 * Collector can ship every decision wherever logs go. Without a registered logger provider it costs nothing.
 */
import { type Logger, logs, SeverityNumber } from '@opentelemetry/api-logs';
import { auditAttributes } from './audit.js';
import type { AuditRecord, AuditSink } from './types.js';

/** The event name of decision log records. */
export const DECISION_LOG_EVENT = 'interlock.capability.decision';

/** Options of an {@link OpenTelemetryLogAuditSink}. */
export interface OpenTelemetryLogAuditSinkOptions {
  /** @default `logs.getLogger('interlock')` (the global provider; a no-op until one is registered) */
  logger?: Logger | undefined;
}

/** Emits each audit record as an OpenTelemetry log record: INFO when allowed, WARN when refused. */
export class OpenTelemetryLogAuditSink implements AuditSink {
  readonly #logger: Logger | undefined;

  constructor(options: OpenTelemetryLogAuditSinkOptions = {}) {
    this.#logger = options.logger;
  }

  write(record: AuditRecord): void {
    // Looked up per write, so a provider registered after the sink was made is still used.
    const logger = this.#logger ?? logs.getLogger('interlock');
    logger.emit({
      eventName: DECISION_LOG_EVENT,
      severityNumber: record.allowed ? SeverityNumber.INFO : SeverityNumber.WARN,
      severityText: record.allowed ? 'INFO' : 'WARN',
      timestamp: Date.parse(record.time),
      body: JSON.stringify(record),
      attributes: auditAttributes(record),
    });
  }
}
