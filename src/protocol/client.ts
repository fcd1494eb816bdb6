/**
 * The MCP client every connection uses: the SDK's `Client` with one cost taken off its request path.
 *
 * For a spec method called without a result schema (`client.callTool`, `readResource`, `getPrompt`, …), the SDK's
 * `request()` builds a Standard Schema adapter over the negotiated era's result check on every call, and to learn
 * whether the method exists in the era it first validates `undefined` against the result schema and formats the
 * failure as text. At concurrency 16 over stdio that probe was most of the zod time in a call's profile, more than
 * all of Interlock's own code (see docs/performance.md). The adapter depends on nothing but the era and the
 * method, so this client builds it once per (era, method) and hands it to `request()`'s explicit-schema overload:
 * same era gate, same result decoding, same validation, same errors.
 *
 * It leans on one protected member of the SDK, `_wireCodec()` (documented for role subclasses). If a future SDK
 * drops it, `request()` falls through to the SDK's own path unchanged and `resultChecksReused` stays false, which
 * a test watches.
 *
 * `tools/call`, the one request sent per tool call, also gets a direct path (see {@link InterlockClient.callTool}).
 * @internal
 */
import {
  Client,
  DEFAULT_REQUEST_TIMEOUT_MSEC,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SERVER_INFO_META_KEY,
} from '@modelcontextprotocol/client';
import { isJsonObject } from '../json.js';
import { TASKS_EXTENSION } from './task-handles.js';

/** The key of the client capabilities in a 2026-07-28 request's `_meta` envelope (SEP-2575). */
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

/** What a result check needs from the SDK's era codec (its `WireCodec` type is not exported). */
interface ResultCodec {
  /** The protocol revision the codec speaks (`2025-11-25`, `2026-07-28`). */
  readonly era?: string;
  decodeResult?(method: string, raw: unknown): DecodedResult;
  validateResult(
    method: string,
    raw: unknown,
  ): { ok: true; value: unknown } | { ok: false; reason: string; message?: string };
}

interface ResultSchema {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    validate(value: unknown): { value: unknown } | { issues: { message: string }[] };
  };
}

/** The codec's reading of a raw result: `complete`, `invalid`, or a kind the role class resolves (`input_required`). */
type DecodedResult =
  | { kind: 'complete'; result: unknown }
  | { kind: 'invalid'; error: Error }
  | { kind: string; inputRequests?: unknown; requestState?: unknown; _meta?: unknown };

/**
 * The members of the SDK's `Protocol` the direct `tools/call` path shares with the SDK's own requests: the id
 * counter, the progress table its `notifications/progress` dispatch reads, and the outbound envelope. They are
 * TypeScript-private in the SDK's types, hence this view; each is checked before use and, if one is missing, calls
 * take the SDK's path.
 */
interface ProtocolInternals {
  _requestMessageId: number;
  _progressHandlers: Map<number, (progress: unknown) => void>;
  _envelopeOutbound(message: Record<string, unknown>): Record<string, unknown>;
  _resolveNonCompleteResult(decoded: DecodedResult, flow: Record<string, unknown>): Promise<unknown>;
  _requestWithSchemaViaCodec(
    codec: ResultCodec,
    request: unknown,
    schema: ResultSchema,
    options: unknown,
  ): Promise<unknown>;
  _options?: { enforceStrictCapabilities?: boolean };
}

function hasInternals(value: object): boolean {
  const v = value as Partial<ProtocolInternals>;
  return (
    typeof v._requestMessageId === 'number' &&
    v._progressHandlers instanceof Map &&
    typeof v._envelopeOutbound === 'function' &&
    typeof v._resolveNonCompleteResult === 'function' &&
    typeof v._requestWithSchemaViaCodec === 'function'
  );
}

/** What `callTool` may be given; anything else (resumption tokens, headers, …) takes the SDK's path. */
interface CallOptions {
  timeout?: number;
  maxTotalTimeout?: number;
  resetTimeoutOnProgress?: boolean;
  onprogress?: (progress: unknown) => void;
  signal?: AbortSignal;
  toolDefinition?: { outputSchema?: unknown };
  allowInputRequired?: boolean;
}
const DIRECT_OPTIONS = new Set([
  'timeout',
  'maxTotalTimeout',
  'resetTimeoutOnProgress',
  'onprogress',
  'signal',
  'toolDefinition',
  'allowInputRequired',
]);

/** One direct `tools/call` in flight (see {@link InterlockClient.callTool}). */
interface DirectCall {
  readonly id: number;
  readonly codec: ResultCodec;
  readonly request: { method: string; params: Record<string, unknown> };
  readonly options: CallOptions;
  readonly startedAt: number;
  /** When the call times out (ms since the epoch): `timeout` after the start, or after the last progress. */
  deadline: number;
  readonly resolve: (value: unknown) => void;
  readonly reject: (reason: unknown) => void;
  /** Listens on the caller's signal, if it gave one. */
  readonly onAbort: (() => void) | undefined;
}

/**
 * The direct calls in flight, by id: a ring of slots indexed by the low bits of the id, which the SDK hands out in
 * increasing order. A slot is emptied when its call ends.
 *
 * Not a `Map`: V8 re-allocates a `Map`'s or `Set`'s table as entries come and go, and for a long-lived one it does
 * so in the old generation, where the abandoned table keeps whatever its entries pointed to alive until the next
 * full collection. A call's state holds its promise and with it the whole pipeline of the call, so every call's
 * objects were being promoted (docs/performance.md, seventh pass). For the same reason a direct call puts nothing
 * in the SDK's response and timeout tables, and its progress handler only once progress comes.
 */
class DirectCalls {
  #slots: (DirectCall | undefined)[] = new Array<DirectCall | undefined>(64).fill(undefined);
  #mask = 63;
  #size = 0;

  /** How many calls are in flight. */
  get size(): number {
    return this.#size;
  }

  get(id: number): DirectCall | undefined {
    const call = this.#slots[id & this.#mask];
    return call !== undefined && call.id === id ? call : undefined;
  }

  add(call: DirectCall): void {
    // Another call still holds the slot (one slower than 64 newer ones, or more): grow until every call has its own.
    while (this.#slots[call.id & this.#mask] !== undefined) this.#grow();
    this.#slots[call.id & this.#mask] = call;
    this.#size++;
  }

  /** The call with this id, taken out; undefined when it already ended (or never was a direct call). */
  take(id: number): DirectCall | undefined {
    const call = this.get(id);
    if (call === undefined) return undefined;
    this.#slots[id & this.#mask] = undefined;
    this.#size--;
    return call;
  }

  /** Every call in flight, taken out (the connection closed). */
  drain(): DirectCall[] {
    const calls = this.#slots.filter((call): call is DirectCall => call !== undefined);
    this.#slots.fill(undefined);
    this.#size = 0;
    return calls;
  }

  /** The ids of the calls whose deadline is past at `now`, and the earliest deadline of the others (or Infinity). */
  due(now: number): { ids: number[]; next: number } {
    const ids: number[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const call of this.#slots) {
      if (call === undefined) continue;
      if (call.deadline <= now) ids.push(call.id);
      else if (call.deadline < next) next = call.deadline;
    }
    return { ids, next };
  }

  #grow(): void {
    let length = this.#slots.length * 2;
    for (;;) {
      const mask = length - 1;
      const slots = new Array<DirectCall | undefined>(length).fill(undefined);
      let fits = true;
      for (const call of this.#slots) {
        if (call === undefined) continue;
        if (slots[call.id & mask] !== undefined) {
          fits = false;
          break;
        }
        slots[call.id & mask] = call;
      }
      if (fits) {
        this.#slots = slots;
        this.#mask = mask;
        return;
      }
      length *= 2;
    }
  }
}

/** The longest delay `setTimeout` takes as given (a longer one fires after 1 ms). */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** Per era codec (the SDK keeps one per era), per method: the adapter, or `null` for a method not in the era. */
const schemas = new WeakMap<ResultCodec, Map<string, ResultSchema | null>>();

function resultSchemaFor(codec: ResultCodec, method: string): ResultSchema | null {
  let byMethod = schemas.get(codec);
  if (byMethod === undefined) {
    byMethod = new Map();
    schemas.set(codec, byMethod);
  }
  let schema = byMethod.get(method);
  if (schema === undefined) {
    // Asked once per era and method, not per request: does this era define a result for the method?
    const probe = codec.validateResult(method, undefined);
    schema =
      !probe.ok && probe.reason === 'not-in-era'
        ? null
        : {
            '~standard': {
              version: 1,
              vendor: 'mcp-interlock',
              validate(value) {
                const outcome = codec.validateResult(method, value);
                if (outcome.ok) return { value: outcome.value };
                return {
                  issues: [
                    {
                      message:
                        outcome.reason === 'invalid' ? String(outcome.message) : `not-in-era: ${method}`,
                    },
                  ],
                };
              },
            },
          };
    byMethod.set(method, schema);
  }
  return schema;
}

function isStandardSchema(value: unknown): boolean {
  return typeof value === 'object' && value !== null && '~standard' in value;
}

/** @internal */
export class InterlockClient extends Client {
  #reused = false;
  #directCalls = 0;
  /** The `tools/call` requests sent by the direct path and not yet answered. */
  readonly #direct = new DirectCalls();
  /** {@link #directCodec}'s answer for the transport and negotiated version it was worked out for. */
  #directPath: { transport: object; version: string; codec: ResultCodec | undefined } | undefined;

  /** The outbound envelope with the tasks extension declared, and the SDK's envelope it was built from. */
  #envelope: { from: Readonly<Record<string, unknown>>; to: Readonly<Record<string, unknown>> } | undefined;

  /**
   * The `_meta` envelope a 2026-07-28 request or notification carries (SEP-2575), with the tasks extension
   * (task-handles.ts) declared in its client capabilities, so a server may answer a `tools/call` with a task. Done
   * here rather than in `initialize`'s capabilities, which on 2025-11-25 have no `extensions` field. The 2025 era has
   * no envelope (`undefined`).
   *
   * The SDK builds its envelope anew for every message. Ours is built once for the entries of the SDK's (the
   * negotiated version, the client's info and capabilities: a new capabilities object after
   * `registerCapabilities`), frozen, and handed out again while those entries are the same objects: every copy made
   * of it per message (the SDK's `_envelopeOutbound`, the direct path's `withMeta`) takes its keys, never writes it.
   */
  protected override _outboundMetaEnvelope(): Readonly<Record<string, unknown>> | undefined {
    const envelope = super._outboundMetaEnvelope();
    if (envelope === undefined) return undefined;
    const last = this.#envelope;
    if (last !== undefined && sameEntries(last.from, envelope)) return last.to;
    const capabilities = envelope[CLIENT_CAPABILITIES_KEY];
    let to: Readonly<Record<string, unknown>>;
    if (typeof capabilities !== 'object' || capabilities === null) to = Object.freeze({ ...envelope });
    else {
      const { extensions } = capabilities as { extensions?: Record<string, unknown> };
      const declared = Object.freeze({
        ...capabilities,
        extensions: { ...extensions, [TASKS_EXTENSION]: {} },
      });
      to = Object.freeze({ ...envelope, [CLIENT_CAPABILITIES_KEY]: declared });
    }
    this.#envelope = { from: envelope, to };
    return to;
  }

  /** True once a request has gone out with a result check built earlier (false if the SDK changed under us). */
  get resultChecksReused(): boolean {
    return this.#reused;
  }

  /** How many `tools/call` requests took the direct path (0 if the SDK changed under us). */
  get directCalls(): number {
    return this.#directCalls;
  }

  /**
   * `tools/call` without the SDK's request funnel, where nothing in that funnel applies. The SDK's `callTool`
   * wraps `request()` in two async layers (an output-schema lookup and SEP-2243 header mirroring), and its funnel
   * allocates a promise, five closures and an options object per request, checks the response against the
   * JSON-RPC result schema a second time and validates the result after one more promise hop. Profiled over
   * stdio that was more CPU than the SDK's 1.x client spent on a whole call (docs/performance.md).
   *
   * Taken only when the caller hands over a tool definition without an `outputSchema` (so the SDK would validate
   * no structured output and look nothing up) and no header mirroring can apply (2025 era, or a transport
   * without per-request HTTP streams). The request is registered with the SDK's own response, progress and
   * timeout tables, so progress resets the timeout, `maxTotalTimeout` ends the call, and a closed connection
   * settles it as it does every request. The answer is decoded and validated by the era's codec, and an
   * `input_required` answer (2026-07-28) goes to the SDK's own driver, so results and errors are the SDK's.
   */
  // biome-ignore lint/suspicious/noExplicitAny: the SDK's signature is passed through unchanged
  override callTool(params: any, options?: any): any {
    const codec = this.#directCodec(options as CallOptions | undefined);
    if (codec === undefined) return super.callTool(params, options);
    this.#directCalls++;
    return this.#callDirect(codec, params as Record<string, unknown>, (options ?? {}) as CallOptions);
  }

  /**
   * Answers to direct calls go straight to {@link _onresponse}: the SDK's dispatcher would first check each
   * message against the JSON-RPC result schema again (the transport already parsed it as a JSON-RPC message). A
   * message with a number id and no method is a response; every other message takes the SDK's dispatch.
   */
  override async connect(
    transport: Parameters<Client['connect']>[0],
    options?: Parameters<Client['connect']>[1],
  ) {
    await super.connect(transport, options);
    const dispatch = transport.onmessage;
    if (dispatch === undefined) return;
    transport.onmessage = (message, extra) => {
      const id = (message as { id?: unknown }).id;
      if (typeof id === 'number' && this.#direct.get(id) !== undefined && !('method' in message)) {
        this._onresponse(message as Parameters<Client['_onresponse']>[0]);
        return;
      }
      dispatch(message, extra);
    };
  }

  protected override _onresponse(response: Parameters<Client['_onresponse']>[0]): void {
    const id = (response as { id?: unknown }).id;
    if (typeof id === 'number' && this.#direct.get(id) !== undefined) {
      this.#answer(id, response);
      return;
    }
    super._onresponse(response);
  }

  #directCodec(options: CallOptions | undefined): ResultCodec | undefined {
    if (options?.toolDefinition === undefined || options.toolDefinition.outputSchema !== undefined) return;
    for (const key in options) if (!DIRECT_OPTIONS.has(key)) return;
    const transport = this.transport;
    const version = this.getNegotiatedProtocolVersion();
    if (transport === undefined || version === undefined) return;
    // The rest depends only on the transport and the negotiated version: worked out once for them, not per call.
    const known = this.#directPath;
    if (known !== undefined && known.transport === transport && known.version === version) return known.codec;
    const codec = this.#directCodecOf();
    this.#directPath = { transport, version, codec };
    return codec;
  }

  /** The codec of the direct path for this connection, or undefined when the SDK's path must be taken. */
  #directCodecOf(): ResultCodec | undefined {
    if (mirrorsHeaders(this)) return;
    if (!hasInternals(this)) return;
    if ((this as unknown as ProtocolInternals)._options?.enforceStrictCapabilities === true) return;
    const codec = this.#codec();
    if (codec === undefined || typeof codec.decodeResult !== 'function') return;
    return resultSchemaFor(codec, 'tools/call') === null ? undefined : codec;
  }

  /**
   * Sends a direct `tools/call`. Its state waits in {@link DirectCalls} until it ends. Its timeout is a deadline that
   * one timer per client watches (see {@link #watch}); its progress handler is registered with the SDK only once a
   * progress notification for it arrives (see {@link _onnotification}).
   */
  #callDirect(codec: ResultCodec, params: Record<string, unknown>, options: CallOptions): Promise<unknown> {
    const self = this as unknown as ProtocolInternals;
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(asSdkError(signal.reason));
    const transport = this.transport;
    if (transport === undefined)
      return Promise.reject(new SdkError(SdkErrorCode.NotConnected, 'Not connected'));
    const id = self._requestMessageId++;
    // As the SDK's request and `_envelopeOutbound` do together: a progress token only when the caller listens for
    // progress, and on 2026-07-28 the envelope's keys under the caller's `_meta` (the caller's win), in one copy.
    const envelope = this._outboundMetaEnvelope();
    const token = options.onprogress === undefined ? undefined : id;
    const sent = envelope === undefined && token === undefined ? params : withMeta(params, envelope, token);
    let resolve!: (value: unknown) => void;
    let reject!: (reason: unknown) => void;
    const promise = new Promise<unknown>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const onAbort = signal === undefined ? undefined : this.#aborter(id, signal);
    const startedAt = Date.now();
    const deadline = startedAt + (options.timeout ?? DEFAULT_REQUEST_TIMEOUT_MSEC);
    this.#direct.add({
      id,
      codec,
      request: { method: 'tools/call', params },
      options,
      startedAt,
      deadline,
      resolve,
      reject,
      onAbort,
    });
    this.#watch(deadline);
    if (onAbort !== undefined) signal?.addEventListener('abort', onAbort, { once: true });
    transport
      .send({ jsonrpc: '2.0', id, method: 'tools/call', params: sent } as never)
      .catch((error: unknown) => {
        const call = this.#end(id);
        call?.reject(error);
      });
    return promise;
  }

  /**
   * The timer behind every direct call's timeout: one per client, due at the earliest deadline it was asked to
   * watch, and left running when calls end. The SDK sets and clears a timer per request, with an entry in its
   * timeout table; at thousands of calls a second that was a visible share of a call's cost. When it fires, it times
   * out the calls whose deadline is past and waits for the earliest of the rest. It keeps the process alive only
   * while calls are in flight, as the SDK's timers do.
   */
  #timer: NodeJS.Timeout | undefined;
  /** When {@link #timer} is due (ms since the epoch); Infinity when there is none. */
  #timerDue = Number.POSITIVE_INFINITY;
  #timerRefed = false;

  #watch(deadline: number): void {
    // A deadline earlier than the timer's (or any, when there is no timer) moves it. One that never comes
    // (Infinity, or NaN from a timeout that is not a number) sets none.
    if (deadline < this.#timerDue) {
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      const delay = Math.min(Math.max(deadline - Date.now(), 0), MAX_TIMER_DELAY_MS);
      this.#timer = setTimeout(this.#onTimer, delay);
      this.#timerDue = deadline;
      this.#timerRefed = true;
    } else if (!this.#timerRefed && this.#timer !== undefined) {
      this.#timer.ref();
      this.#timerRefed = true;
    }
  }

  #onTimer = (): void => {
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
    this.#timerRefed = false;
    const { ids, next } = this.#direct.due(Date.now());
    for (const id of ids) this.#cancel(id, undefined);
    if (this.#direct.size > 0) this.#watch(next);
  };

  #stopTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
    this.#timerRefed = false;
  }

  /**
   * A progress notification for a direct call: its handler is registered with the SDK now, before the SDK reads and
   * checks the notification, rather than for every call. The SDK hands it the progress as it does to any request's.
   */
  protected override _onnotification(
    notification: Parameters<Client['_onnotification']>[0],
    extra?: Parameters<Client['_onnotification']>[1],
  ): void {
    if (notification.method === 'notifications/progress') {
      const token = (notification.params as { progressToken?: unknown } | undefined)?.progressToken;
      const id = Number(token);
      const handlers = (this as unknown as ProtocolInternals)._progressHandlers;
      // Only for a call that sent a token (its caller listens): for any other the SDK reports an unknown token.
      const call = this.#direct.get(id);
      if (call?.options.onprogress !== undefined && !handlers.has(id)) handlers.set(id, this.#progress(id));
    }
    super._onnotification(notification, extra);
  }

  /**
   * The connection closed: every direct call in flight rejects with the SDK's error, after the SDK's own teardown,
   * as its own requests do.
   */
  protected override _onclose(): void {
    const calls = this.#direct.drain();
    this.#stopTimer();
    try {
      super._onclose();
    } finally {
      if (calls.length > 0) {
        const error = new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed');
        for (const call of calls) {
          if (call.onAbort !== undefined) call.options.signal?.removeEventListener('abort', call.onAbort);
          call.reject(error);
        }
      }
    }
  }

  // Each of these two returns a closure over the client and the id only (see DirectCalls).
  #progress(id: number): (progress: unknown) => void {
    return (progress) => this.#onProgress(id, progress);
  }

  #aborter(id: number, signal: AbortSignal): () => void {
    return () => this.#cancel(id, signal.reason);
  }

  /**
   * Progress for a call: with `resetTimeoutOnProgress` it moves the deadline, or ends the call once
   * `maxTotalTimeout` has run out (the SDK's error); then the caller's handler gets it.
   */
  #onProgress(id: number, progress: unknown): void {
    const call = this.#direct.get(id);
    if (call === undefined) return;
    const { options } = call;
    if (options.resetTimeoutOnProgress === true) {
      const now = Date.now();
      const totalElapsed = now - call.startedAt;
      if (options.maxTotalTimeout && totalElapsed >= options.maxTotalTimeout) {
        this.#end(id);
        call.reject(
          new SdkError(SdkErrorCode.RequestTimeout, 'Maximum total timeout exceeded', {
            maxTotalTimeout: options.maxTotalTimeout,
            totalElapsed,
          }),
        );
        return;
      }
      // The timer, due earlier, finds the new deadline when it fires.
      call.deadline = now + (options.timeout ?? DEFAULT_REQUEST_TIMEOUT_MSEC);
    }
    options.onprogress?.(progress);
  }

  /** Takes the call out of the ring, the SDK's progress table and the caller's signal; undefined when it already ended. */
  #end(id: number): DirectCall | undefined {
    const call = this.#direct.take(id);
    if (call === undefined) return undefined;
    if (call.options.onprogress !== undefined)
      (this as unknown as ProtocolInternals)._progressHandlers.delete(id);
    if (call.onAbort !== undefined) call.options.signal?.removeEventListener('abort', call.onAbort);
    if (this.#direct.size === 0 && this.#timerRefed) {
      // Nothing in flight: the timer stays for the next call but no longer keeps the process alive.
      this.#timer?.unref();
      this.#timerRefed = false;
    }
    return call;
  }

  /** The answer to a call: its result, or the JSON-RPC error it carries as the SDK's `ProtocolError`. */
  #answer(id: number, response: unknown): void {
    const call = this.#end(id);
    if (call === undefined) return;
    const message = response as {
      result?: unknown;
      error?: { code: number; message: string; data?: unknown };
    };
    if (message.error !== undefined) {
      call.reject(ProtocolError.fromError(message.error.code, message.error.message, message.error.data));
      return;
    }
    try {
      call.resolve(this.#settle(call.codec, call.request, call.options, call.startedAt, message.result));
    } catch (error) {
      call.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /**
   * The timeout (`reason` undefined) or the caller's abort: the server is told, as the SDK tells it (2025:
   * `notifications/cancelled`), and the call rejects with what the SDK rejects with.
   */
  #cancel(id: number, reason: unknown): void {
    const call = this.#end(id);
    if (call === undefined) return;
    const timeout = call.options.timeout ?? DEFAULT_REQUEST_TIMEOUT_MSEC;
    const why =
      reason === undefined
        ? new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out', { timeout })
        : reason;
    const self = this as unknown as ProtocolInternals;
    const cancelled = {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: id, reason: String(why) },
    };
    this.transport
      ?.send(self._envelopeOutbound(cancelled) as never)
      .catch((error: unknown) => this.onerror?.(new Error(`Failed to send cancellation: ${error}`)));
    call.reject(asSdkError(why));
  }

  /**
   * An answer's result, decoded by the era's codec and validated by its result schema; a kind the codec leaves to
   * the role class (`input_required`) is handed to the SDK's driver, as a promise. Throws what the SDK rejects with.
   */
  #settle(
    codec: ResultCodec,
    request: { method: string; params: Record<string, unknown> },
    options: CallOptions,
    startedAt: number,
    raw: unknown,
  ): unknown {
    const plain = plainTextResult(codec, raw);
    if (plain !== undefined) {
      this.#reused = true;
      return plain;
    }
    const self = this as unknown as ProtocolInternals;
    const decoded = (codec.decodeResult as NonNullable<ResultCodec['decodeResult']>)(request.method, raw);
    const schema = resultSchemaFor(codec, request.method) as ResultSchema;
    if (decoded.kind === 'invalid') throw (decoded as { error: Error }).error;
    if (decoded.kind !== 'complete') {
      if (decoded.kind === 'input_required' && options.allowInputRequired === true) {
        const d = decoded as { inputRequests?: unknown; requestState?: unknown; _meta?: unknown };
        return {
          resultType: 'input_required',
          inputRequests: d.inputRequests,
          ...(d.requestState !== undefined && { requestState: d.requestState }),
          ...(d._meta !== undefined && { _meta: d._meta }),
        };
      }
      // Further legs are the SDK's own requests (its multi-round-trip driver, or its error for the kind).
      return self._resolveNonCompleteResult(decoded, {
        codec,
        request,
        resultSchema: schema,
        options,
        flowStartedAt: startedAt,
        retry: (next: Record<string, unknown> | undefined, legOptions: unknown) =>
          self._requestWithSchemaViaCodec(
            codec,
            next === undefined ? { method: request.method } : { method: request.method, params: next },
            schema,
            legOptions,
          ),
      });
    }
    const outcome = schema['~standard'].validate((decoded as { result: unknown }).result);
    if ('issues' in outcome) {
      const why = outcome.issues.map((issue) => issue.message).join(', ');
      throw new SdkError(SdkErrorCode.InvalidResult, `Invalid result for ${request.method}: ${why}`);
    }
    this.#reused = true;
    return outcome.value;
  }

  // biome-ignore lint/suspicious/noExplicitAny: the SDK's overloads are re-dispatched unchanged
  override request(request: any, schemaOrOptions?: any, maybeOptions?: any): any {
    // Before a version is negotiated the SDK pins lifecycle methods to a bootstrap era: its own path decides.
    if (!isStandardSchema(schemaOrOptions) && this.getNegotiatedProtocolVersion() !== undefined) {
      const codec = this.#codec();
      const schema = codec === undefined ? null : resultSchemaFor(codec, request.method);
      if (schema !== null) {
        this.#reused = true;
        return super.request(request, schema, schemaOrOptions);
      }
    }
    return super.request(request, schemaOrOptions, maybeOptions);
  }

  #codec(): ResultCodec | undefined {
    const accessor = (this as unknown as { _wireCodec?: () => unknown })._wireCodec;
    if (typeof accessor !== 'function') return undefined;
    const codec = accessor.call(this) as Partial<ResultCodec> | undefined;
    return typeof codec?.validateResult === 'function' ? (codec as ResultCodec) : undefined;
  }
}

/**
 * Whether `client` mirrors tool arguments into `Mcp-Param-*` headers (SEP-2243), and so may be answered
 * `HEADER_MISMATCH`: a 2026-07-28 connection over a transport with a stream per request (Streamable HTTP). Over
 * stdio, SSE or a 2025 era there are no such headers.
 */
function mirrorsHeaders(client: Client): boolean {
  const transport = client.transport as { hasPerRequestStream?: boolean } | undefined;
  return client.getProtocolEra() === 'modern' && transport?.hasPerRequestStream === true;
}

/**
 * A `tools/call` result made of text blocks alone, read by its shape: `content` (text blocks with exactly `type`
 * and `text`) and an optional boolean `isError`; on 2026-07-28 also `resultType: "complete"` and an optional `_meta`
 * that names the server and nothing else (see {@link plainServerMeta}: the v2 SDK's server stamps every result
 * with it). For such a result the era's codec and its zod result schema return the same value (less `resultType`),
 * at a cost that profiled over stdio above the rest of the SDK's work on an answer; anything else, a task handle,
 * structured content, other `_meta`, a block of another type or one extra key, returns undefined and takes the
 * codec's path. A property test (test/protocol/client-direct.test.ts) checks the two agree on every value this
 * accepts.
 * @internal
 */
export function plainTextResult(codec: { era?: unknown }, raw: unknown): unknown {
  if (!isJsonObject(raw)) return undefined;
  const modern = codec.era === '2026-07-28';
  if (!modern && codec.era !== '2025-11-25') return undefined;
  const record = raw as { content?: unknown; isError?: unknown; resultType?: unknown; _meta?: unknown };
  for (const key in record) {
    if (key === 'content' || key === 'isError' || (modern && (key === 'resultType' || key === '_meta')))
      continue;
    return undefined;
  }
  if (modern && record.resultType !== 'complete') return undefined;
  if (record.isError !== undefined && typeof record.isError !== 'boolean') return undefined;
  const content = record.content;
  if (!Array.isArray(content)) return undefined;
  for (const block of content as unknown[]) {
    if (!isJsonObject(block)) return undefined;
    let keys = 0;
    for (const key in block) {
      if (key !== 'type' && key !== 'text') return undefined;
      keys++;
    }
    const text = block as { type?: unknown; text?: unknown };
    if (keys !== 2 || text.type !== 'text' || typeof text.text !== 'string') return undefined;
  }
  if (!modern) return record;
  if (record._meta === undefined) {
    return record.isError === undefined ? { content } : { content, isError: record.isError };
  }
  const meta = plainServerMeta(record._meta);
  if (meta === undefined) return undefined;
  return record.isError === undefined
    ? { _meta: meta, content }
    : { _meta: meta, content, isError: record.isError };
}

/** The fields of a server's `Implementation` that are plain strings, in the order the SDK's schema lists them. */
const SERVER_INFO_STRINGS = ['name', 'title', 'version', 'websiteUrl', 'description'] as const;

/**
 * A result's `_meta` as the 2026-07-28 result schema returns it, when it holds the server's name alone
 * (`io.modelcontextprotocol/serverInfo`: `name` and `version`, and optionally `title`, `websiteUrl` and
 * `description`, all strings); otherwise undefined. The schema makes a new object of the server info with its keys
 * in its own order and drops none of these, so this does too.
 */
function plainServerMeta(meta: unknown): Record<string, unknown> | undefined {
  if (!isJsonObject(meta)) return undefined;
  for (const key in meta) if (key !== SERVER_INFO_META_KEY) return undefined;
  const fields = meta[SERVER_INFO_META_KEY];
  if (!isJsonObject(fields)) return undefined;
  const parsed: Record<string, unknown> = {};
  let known = 0;
  for (const key of SERVER_INFO_STRINGS) {
    if (!Object.hasOwn(fields, key)) continue;
    if (typeof fields[key] !== 'string') return undefined;
    parsed[key] = fields[key];
    known++;
  }
  let keys = 0;
  for (const _key in fields) keys++;
  if (keys !== known || parsed.name === undefined || parsed.version === undefined) return undefined;
  return { [SERVER_INFO_META_KEY]: parsed };
}

/**
 * Whether this V8 copies an object slowly when it is spread into a literal that also names one of its keys, as
 * `{ ...params, _meta }` does: about a microsecond a call in V8 11 (Node 20), ten times `Object.assign`. V8 12 (Node
 * 22) and later spread such objects faster than they assign them (docs/performance.md, thirteenth pass).
 */
const SLOW_SPREAD = Number.parseInt(process.versions.v8 ?? '', 10) < 12;

/**
 * A copy of a request's params whose `_meta` holds the outbound envelope's keys, then the caller's `_meta` keys (which
 * win, as in the SDK's `_envelopeOutbound`), then `progressToken` when there is one. The caller's objects and the
 * envelope are not written. Chosen once, by {@link SLOW_SPREAD}.
 * @internal
 */
export const withMeta: (
  params: Record<string, unknown>,
  envelope: Readonly<Record<string, unknown>> | undefined,
  token: number | undefined,
) => Record<string, unknown> = SLOW_SPREAD
  ? (params, envelope, token) => {
      const own = params._meta as object | undefined;
      let meta: Record<string, unknown>;
      if (envelope === undefined) meta = assigned(own);
      else if (own !== undefined && own !== null && Object.hasOwn(own, '__proto__'))
        meta = { ...envelope, ...own };
      else {
        meta = assigned(envelope);
        if (own !== undefined) Object.assign(meta, own);
      }
      if (token !== undefined) meta.progressToken = token;
      const sent = assigned(params);
      sent._meta = meta;
      return sent;
    }
  : (params, envelope, token) => ({
      ...params,
      _meta:
        token === undefined
          ? { ...envelope, ...(params._meta as object | undefined) }
          : { ...envelope, ...(params._meta as object | undefined), progressToken: token },
    });

/** Whether two envelopes have the same keys, each with the same value (`===`). */
function sameEntries(a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): boolean {
  let count = 0;
  for (const key in b) {
    if (a[key] !== b[key] || !Object.hasOwn(a, key)) return false;
    count++;
  }
  for (const _key in a) count--;
  return count === 0;
}

/**
 * An object's own enumerable properties in a new plain object, by `Object.assign`. One with an own `__proto__` key
 * (JSON.parse makes those) is spread instead: `Object.assign` would set the copy's prototype from it, and the key
 * would be lost.
 */
function assigned(value: object | undefined): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  return Object.hasOwn(value, '__proto__')
    ? { ...(value as Record<string, unknown>) }
    : Object.assign<Record<string, unknown>, object>({}, value);
}

/** What a cancelled request rejects with, as the SDK words it. */
function asSdkError(reason: unknown): SdkError {
  return reason instanceof SdkError ? reason : new SdkError(SdkErrorCode.RequestTimeout, String(reason));
}
