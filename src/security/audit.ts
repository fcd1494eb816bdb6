/**
 * Built-in audit sinks (issue 3, "Audit"): an in-memory ring buffer, a JSON-lines file, OpenTelemetry
 * span events, and a combinator. A sink reports failure by throwing or rejecting; the gate decides
 * what a failure means (`auditFailure`).
 */
import { writeSync } from 'node:fs';
import { type FileHandle, mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AuditError, ClosedError, ConfigError } from '../errors.js';
import { type Attributes, type Span, type Tracer, trace } from '../otel.js';
import { AuditChain, type AuditChainOptions, type AuditCheckpoint } from './audit-chain.js';
import type { AccessRequest, AuditRecord, AuditSink } from './types.js';

/** Default capacity of a {@link MemoryAuditSink}. */
export const DEFAULT_AUDIT_CAPACITY = 1000;
/** Name of the span event {@link OpenTelemetryAuditSink} adds. */
export const AUDIT_SPAN_EVENT = 'interlock.capability.decision';

/** Options of a {@link MemoryAuditSink}. */
export interface MemoryAuditSinkOptions {
  /** Records kept; older ones are dropped first. @default DEFAULT_AUDIT_CAPACITY (1000) */
  capacity?: number | undefined;
}

/** Keeps the latest records in memory (a ring buffer). For tests, debugging and `explain`. */
export class MemoryAuditSink implements AuditSink {
  readonly capacity: number;
  readonly #buffer: (AuditRecord | undefined)[];
  #next = 0;
  #count = 0;
  #dropped = 0;

  constructor(options: MemoryAuditSinkOptions = {}) {
    const capacity = options.capacity ?? DEFAULT_AUDIT_CAPACITY;
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new ConfigError(`MemoryAuditSink capacity must be a positive integer, got ${String(capacity)}.`, {
        issues: [{ path: 'capacity', message: 'must be a positive integer' }],
      });
    }
    this.capacity = capacity;
    this.#buffer = new Array(capacity);
  }

  write(record: AuditRecord): void {
    this.#buffer[this.#next] = Object.isFrozen(record) ? record : Object.freeze({ ...record });
    this.#next = (this.#next + 1) % this.capacity;
    if (this.#count < this.capacity) this.#count++;
    else this.#dropped++;
  }

  /** The records held, oldest first: a frozen copy. */
  get records(): readonly AuditRecord[] {
    const out: AuditRecord[] = [];
    const start = this.#count < this.capacity ? 0 : this.#next;
    for (let i = 0; i < this.#count; i++) out.push(this.#buffer[(start + i) % this.capacity]!);
    return Object.freeze(out);
  }

  /** How many records were dropped to make room. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Empties the buffer. */
  clear(): void {
    this.#buffer.fill(undefined);
    this.#next = 0;
    this.#count = 0;
  }
}

/** Options of a {@link JsonLinesAuditSink}. */
export interface JsonLinesAuditSinkOptions {
  /** File mode when the file is created. @default 0o600 */
  mode?: number | undefined;
  /**
   * Chain the records (issue 40): each line carries a chain id, a sequence number and the hash of the line before,
   * with a signed checkpoint line every `checkpointEvery` records, every `checkpointIntervalMs` and on `close()`.
   * `verifyAuditChain` (or `interlock audit verify`) checks the file. @default off
   */
  chain?: AuditChainOptions | undefined;
}

/**
 * Appends one JSON line per record to a file (created with mode 0600, parent directories too). Writes
 * are serialized in call order; `write` resolves once its line is written, so the gate can block on
 * failure. `close()` waits for pending writes; it is safe to call twice.
 */
export class JsonLinesAuditSink implements AuditSink, AsyncDisposable {
  readonly path: string;
  readonly #file: JsonLinesFile;
  readonly #chain: AuditChain | undefined;
  #closed = false;

  constructor(path: string, options: JsonLinesAuditSinkOptions = {}) {
    if (typeof path !== 'string' || path === '') {
      throw new ConfigError('JsonLinesAuditSink needs a file path.', {
        issues: [{ path: 'path', message: 'required' }],
      });
    }
    this.path = path;
    this.#file = new JsonLinesFile(path, options.mode ?? 0o600, 'audit file sink');
    // A checkpoint the timer makes is written in turn; should that write fail, the next checkpoint covers it.
    this.#chain =
      options.chain === undefined
        ? undefined
        : new AuditChain(
            options.chain,
            (cp) => void this.#file.appendLine(checkpointLine(cp)).catch(() => undefined),
          );
  }

  /** The id of this sink's chain, when it chains its records. */
  get chainId(): string | undefined {
    return this.#chain?.id;
  }

  write(record: AuditRecord): Promise<void> {
    if (this.#chain === undefined) return this.#file.append(record);
    if (this.#closed) {
      return Promise.reject(new ClosedError(`The audit file sink for '${this.path}' is closed.`));
    }
    let line: string;
    try {
      const { entry, checkpoint } = this.#chain.link(record);
      line = `${JSON.stringify(entry)}\n${checkpoint === undefined ? '' : checkpointLine(checkpoint)}`;
    } catch (err) {
      return Promise.reject(
        new AuditError('The audit record could not be serialized as JSON.', { cause: err }),
      );
    }
    return this.#file.appendLine(line);
  }

  /** Writes the chain's final checkpoint, waits for pending writes and closes the file. Safe to call more than once. */
  async close(): Promise<void> {
    let failure: { cause: unknown } | undefined;
    if (!this.#closed) {
      this.#closed = true;
      // The final checkpoint: the file ends here, and a verifier can tell a cut tail from a closed one.
      const final = this.#chain?.close();
      if (final !== undefined) {
        failure = await this.#file.appendLine(checkpointLine(final)).then(
          () => undefined,
          (cause: unknown) => ({ cause }),
        );
      }
    }
    await this.#file.close();
    if (failure !== undefined) {
      throw new AuditError(
        `The final checkpoint of the audit chain in '${this.path}' could not be written.`,
        {
          cause: failure.cause,
        },
      );
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** A checkpoint as one JSON line. */
function checkpointLine(checkpoint: AuditCheckpoint): string {
  return `${JSON.stringify({ checkpoint })}\n`;
}

/**
 * A JSON-lines file appended to in call order (the audit file sink's and the decision recording's writer). The file
 * and its parent directories are created on the first line; a failed open is retried by the next one.
 * @internal
 */
export class JsonLinesFile {
  readonly path: string;
  readonly #mode: number;
  readonly #what: string;
  #handle: Promise<FileHandle> | undefined;
  #tail: Promise<void> = Promise.resolve();
  /** Lines not yet being written: the next write takes them all. */
  #waiting: { lines: string[]; written: Promise<void> } | undefined;
  #closed = false;

  constructor(path: string, mode: number, what: string) {
    this.path = path;
    this.#mode = mode;
    this.#what = what;
  }

  /** Appends `value` as one JSON line; resolves once it is written. */
  append(value: unknown): Promise<void> {
    let line: string;
    try {
      line = `${JSON.stringify(value)}\n`;
    } catch (err) {
      return Promise.reject(
        new AuditError('The audit record could not be serialized as JSON.', { cause: err }),
      );
    }
    return this.appendLine(line);
  }

  /**
   * Appends text that is already one or more JSON lines, each ending in a newline. Lines appended in the same turn,
   * or while the file is being opened, go out together, in order, in one write (issue 41: one write per call was
   * a large share of a busy gateway's time); each line's promise settles with the write that holds it.
   *
   * The write itself is synchronous, as pino's file destination is by default: an append of a few hundred bytes
   * to the page cache takes some 5 µs, where the same write through the thread pool cost some 50 µs of CPU
   * (measured on the CI machine) and was the largest single item in the gateway's profile. Both resolve at the
   * same point: the line is in the file (the kernel's), so a failed write still refuses the call that waited.
   */
  appendLine(line: string): Promise<void> {
    if (this.#closed) {
      return Promise.reject(new ClosedError(`The ${this.#what} for '${this.path}' is closed.`));
    }
    const waiting = this.#waiting;
    if (waiting !== undefined) {
      waiting.lines.push(line);
      return waiting.written;
    }
    const lines = [line];
    const run = this.#tail.then(async () => {
      let handle: FileHandle;
      try {
        handle = await this.#open();
      } finally {
        // From here on (written or failed), new lines wait for the next write.
        if (this.#waiting?.lines === lines) this.#waiting = undefined;
      }
      writeWhole(handle.fd, lines.length === 1 ? lines[0]! : lines.join(''));
    });
    this.#waiting = { lines, written: run };
    // The chain continues after a failure; the failure goes to the callers of the lines in that write.
    this.#tail = run.catch(() => undefined);
    return run;
  }

  #open(): Promise<FileHandle> {
    if (this.#handle === undefined) {
      const opening = (async () => {
        await mkdir(dirname(this.path), { recursive: true });
        return open(this.path, 'a', this.#mode);
      })();
      this.#handle = opening;
      // A failed open is retried by the next write rather than failing forever.
      opening.catch(() => {
        if (this.#handle === opening) this.#handle = undefined;
      });
    }
    return this.#handle;
  }

  /** Waits for pending writes and closes the file. Safe to call more than once. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#tail;
    const handle = this.#handle;
    this.#handle = undefined;
    if (handle !== undefined) await (await handle.catch(() => undefined))?.close();
  }
}

/** Writes all of `text` at the end of the file open as `fd` (a write may take less than all it is given). */
function writeWhole(fd: number, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
}

/** Options of an {@link OpenTelemetryAuditSink}. */
export interface OpenTelemetryAuditSinkOptions {
  /**
   * Used to start a short span holding the event when no span is active.
   * @default `trace.getTracer('interlock')` (the global provider; a no-op when none is registered)
   */
  tracer?: Tracer | undefined;
  /** Returns the span to record on. @default `trace.getActiveSpan` */
  getSpan?: (() => Span | undefined) | undefined;
}

/**
 * Adds a span event `interlock.capability.decision` to the active span, with the record as attributes
 * (`interlock.resource`, `interlock.effect`, ...). Argument values never go there, only their names.
 */
export class OpenTelemetryAuditSink implements AuditSink {
  readonly #tracer: Tracer | undefined;
  readonly #getSpan: () => Span | undefined;

  constructor(options: OpenTelemetryAuditSinkOptions = {}) {
    this.#tracer = options.tracer;
    this.#getSpan = options.getSpan ?? (() => trace.getActiveSpan());
  }

  write(record: AuditRecord): void {
    // Without an OpenTelemetry SDK spans record nothing: skip building attributes nobody keeps.
    const span = this.#getSpan();
    if (span !== undefined) {
      if (span.isRecording()) span.addEvent(AUDIT_SPAN_EVENT, auditAttributes(record));
      return;
    }
    const own = (this.#tracer ?? trace.getTracer('interlock')).startSpan(AUDIT_SPAN_EVENT);
    if (own.isRecording()) own.addEvent(AUDIT_SPAN_EVENT, auditAttributes(record));
    own.end();
  }
}

/** The span-event attributes for a record. */
export function auditAttributes(record: AuditRecord): Attributes {
  return decisionAttributes(record);
}

/** What {@link decisionAttributes} names: an audit record, or as much of one as a span knows. */
export type DecisionFacts = Pick<AuditRecord, 'resource' | 'action' | 'effect' | 'allowed' | 'reason'> &
  Partial<Omit<AuditRecord, 'resource' | 'action' | 'effect' | 'allowed' | 'reason'>>;

/**
 * The one attribute builder for capability decisions (issue 15): the audit sink's span events and the
 * invocation pipeline's decision events both come from here, so they name the same facts the same way.
 */
export function decisionAttributes(facts: DecisionFacts): Attributes {
  const a: Attributes = {
    'interlock.resource': facts.resource,
    'interlock.action': facts.action,
    'interlock.effect': facts.effect,
    'interlock.allowed': facts.allowed,
    'interlock.reason': facts.reason,
  };
  if (facts.time !== undefined) a['interlock.time'] = facts.time;
  if (facts.argumentKeys !== undefined) a['interlock.argument_keys'] = [...facts.argumentKeys];
  if (facts.agent !== undefined) a['interlock.agent'] = facts.agent;
  if (facts.ruleId !== undefined) a['interlock.rule_id'] = facts.ruleId;
  if (facts.server !== undefined) a['interlock.server'] = facts.server;
  if (facts.tool !== undefined) a['interlock.tool'] = facts.tool;
  if (facts.definitionHash !== undefined) a['interlock.definition_hash'] = facts.definitionHash;
  if (facts.approved !== undefined) a['interlock.approved'] = facts.approved;
  if (facts.principal !== undefined) a['interlock.principal'] = facts.principal;
  if (facts.policyRevision !== undefined) a['interlock.policy_revision'] = facts.policyRevision;
  const flow = facts.flow;
  if (flow !== undefined) {
    // Issue 42: names only. The carried entries as three parallel lists (attribute values are flat arrays).
    a['interlock.flow.labels'] = [...flow.labels];
    a['interlock.flow.carried.arguments'] = flow.carried.map((c) => c.argument);
    a['interlock.flow.carried.labels'] = flow.carried.map((c) => c.label);
    a['interlock.flow.carried.sources'] = flow.carried.map((c) => c.source);
    if (flow.target !== undefined) a['interlock.flow.target'] = [...flow.target];
    if (flow.truncated === true) a['interlock.flow.truncated'] = true;
  }
  return a;
}

/**
 * One sink that writes to all of `sinks` (concurrently). If any fails, the combined write fails with an
 * `AuditError` after every sink was tried. `close()` closes all of them.
 */
export function combineAuditSinks(...sinks: AuditSink[]): AuditSink {
  const list = [...sinks];
  const failed = (failures: readonly unknown[]) =>
    new AuditError(`${failures.length} of ${list.length} audit sinks failed.`, {
      cause: failures.length === 1 ? failures[0] : new AggregateError(failures),
    });
  return {
    // Synchronous when every sink is: no promise, no extra turn for the gate, and nothing allocated per record
    // when every sink succeeds (it runs on every call the gate decides).
    write(record: AuditRecord, request?: AccessRequest): void | Promise<void> {
      let failures: unknown[] | undefined;
      let pending: Promise<unknown>[] | undefined;
      for (const sink of list) {
        try {
          const result = sink.write(record, request);
          if (result !== undefined) {
            pending ??= [];
            pending.push(result);
          }
        } catch (err) {
          failures ??= [];
          failures.push(err);
        }
      }
      // Failures still reject (never throw), as an asynchronous sink's would.
      if (pending === undefined) return failures === undefined ? undefined : Promise.reject(failed(failures));
      return Promise.allSettled(pending).then((results) => {
        const all = failures ?? [];
        for (const r of results) if (r.status === 'rejected') all.push(r.reason);
        if (all.length > 0) throw failed(all);
      });
    },
    async close(): Promise<void> {
      await Promise.allSettled(list.map(async (s) => s.close?.()));
    },
  };
}
