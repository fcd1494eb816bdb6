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
 * `tools/call`, the one request sent per tool call, also gets a direct path (see {@link InterlockClient.callTool}).
 * Every SDK member it relies on is named in sdk-internals.ts; its answers arrive through the inbound chain
 * (inbound.ts), installed by {@link InterlockClient.connect}.
 * @internal
 */
import {
  Client,
  type ConnectOptions,
  DEFAULT_REQUEST_TIMEOUT_MSEC,
  type JSONRPCMessage,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  type Transport,
} from '@modelcontextprotocol/client';
import { DirectCalls } from './direct-calls.js';
import { type InboundChain, type InboundStage, inboundStages, installInbound } from './inbound.js';
import { boundInputRounds } from './input-rounds.js';
import {
  defaultResultType,
  isStandardSchema,
  plainTextResult,
  type ResultSchema,
  resultSchemaFor,
  sameEntries,
  withMeta,
} from './results.js';
import {
  hasPrivateMembers,
  listenForProgress,
  stopListeningForProgress,
  takeRequestId,
  type WireCodec,
  wireCodecOf,
} from './sdk-internals.js';
import { acceptTaskResults, TASKS_EXTENSION } from './task-handles.js';

/** The key of the client capabilities in a 2026-07-28 request's `_meta` envelope (SEP-2575). */
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

/**
 * The identifier of the Skills extension (SEP-2640; the SDK's `SKILLS_EXTENSION_ID`, which a test holds equal), here
 * rather than imported so that a client that never reads a skill never loads the SDK's skills module (skills.ts).
 */
export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';

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
  readonly codec: WireCodec;
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

/** What the inbound chain of a connection holds besides the answers to direct calls (see inbound.ts). */
export interface InboundOptions {
  /** Lift task handles answering `tools/call` (task-handles.ts). @default false */
  taskHandles?: boolean | undefined;
  /** Refuse an `input_required` round with more input requests than this (input-rounds.ts). @default no bound */
  maxInputRequestsPerRound?: number | undefined;
}

/** The SDK's connect options, and what goes in the inbound chain. */
export interface InterlockConnectOptions extends ConnectOptions {
  inbound?: InboundOptions | undefined;
}

/** The longest delay `setTimeout` takes as given (a longer one fires after 1 ms). */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** @internal */
export class InterlockClient extends Client {
  #reused = false;
  #directCalls = 0;
  /** The `tools/call` requests sent by the direct path and not yet answered. */
  readonly #direct = new DirectCalls<DirectCall>();
  /** The inbound chain of the current transport (inbound.ts). */
  #inbound: InboundChain | undefined;
  /** Whether the SDK was asked to refuse requests the server's capabilities do not cover (then the SDK's path). */
  readonly #strictCapabilities: boolean;
  /** Called once when the connection closes (`whenClosed`). */
  #onClosed: (() => void)[] = [];

  constructor(...args: ConstructorParameters<typeof Client>) {
    super(...args);
    this.#strictCapabilities = args[1]?.enforceStrictCapabilities === true;
  }
  /** {@link #directCodec}'s answer for the transport and negotiated version it was worked out for. */
  #directPath: { transport: object; version: string; codec: WireCodec | undefined } | undefined;

  /** The outbound envelope with the tasks extension declared, and the SDK's envelope it was built from. */
  #envelope: { from: Readonly<Record<string, unknown>>; to: Readonly<Record<string, unknown>> } | undefined;

  /**
   * The `_meta` envelope a 2026-07-28 request or notification carries (SEP-2575), with the tasks extension
   * (task-handles.ts) declared in its client capabilities, so a server may answer a `tools/call` with a task, and the
   * Skills extension (skills.ts), which a server may look for before it serves skills; declaring it grants nothing,
   * since every skill read is gated (`mcp:{server}:skill:{name}`, default deny). Done
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
        extensions: { ...extensions, [TASKS_EXTENSION]: {}, [SKILLS_EXTENSION]: {} },
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
   * Connects over `transport` with the inbound chain installed first (inbound.ts), in its one order: result types,
   * task handles,
   * input-round bounds (when asked for in `options.inbound`), then the answers to direct calls, then the SDK's
   * dispatch.
   */
  override async connect(transport: Transport, options?: InterlockConnectOptions): Promise<void> {
    const { inbound, ...connectOptions } = options ?? {};
    const max = inbound?.maxInputRequestsPerRound;
    this.#inbound = installInbound(
      transport,
      inboundStages({
        resultType: defaultResultType(() => this.getProtocolEra() === 'modern'),
        taskHandles: inbound?.taskHandles === true ? acceptTaskResults(transport) : undefined,
        inputBounds: max === undefined ? undefined : boundInputRounds(max),
        directAnswers: this.#directAnswers,
      }),
    );
    await super.connect(transport, connectOptions);
  }

  /** The inbound chain of the transport this client connected over last (for tests and diagnostics). */
  get inbound(): InboundChain | undefined {
    return this.#inbound;
  }

  /** How many entries the table of direct calls holds room for: bounded however many calls went by. */
  get directCallFootprint(): number {
    return this.#direct.footprint;
  }

  /**
   * The chain's stage for direct calls: an answer to one is settled here, without the SDK's dispatch (which would
   * check it against the JSON-RPC result schema again: the transport already parsed it). Its id is read as the
   * SDK reads it (`Number(id)`). Progress for a direct call whose caller listens registers its handler with the SDK
   * before the SDK reads the notification, rather than for every call.
   */
  readonly #directAnswers: InboundStage = {
    name: 'direct-answers',
    handle: (message, extra, next) => {
      if (this.#direct.size !== 0) {
        if (!('method' in message)) {
          const id = responseId(message);
          if (this.#direct.get(id) !== undefined) {
            this.#answer(id, message);
            return;
          }
        } else if (message.method === 'notifications/progress') {
          const token = (message.params as { progressToken?: unknown } | undefined)?.progressToken;
          const id = Number(token);
          // Only for a call that sent a token (its caller listens): for any other the SDK reports an unknown token.
          if (this.#direct.get(id)?.options.onprogress !== undefined)
            listenForProgress(this, id, this.#progress(id));
        }
      }
      next(message, extra);
    },
  };

  #directCodec(options: CallOptions | undefined): WireCodec | undefined {
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
  #directCodecOf(): WireCodec | undefined {
    if (mirrorsHeaders(this)) return;
    if (!hasPrivateMembers(this) || this.#strictCapabilities) return;
    const codec = wireCodecOf(this);
    if (codec === undefined || typeof codec.decodeResult !== 'function') return;
    return resultSchemaFor(codec, 'tools/call') === null ? undefined : codec;
  }

  /**
   * Sends a direct `tools/call`. Its state waits in {@link DirectCalls} until it ends. Its timeout is a deadline that
   * one timer per client watches (see {@link #watch}); its progress handler is registered with the SDK only once a
   * progress notification for it arrives (see {@link #directAnswers}).
   */
  #callDirect(codec: WireCodec, params: Record<string, unknown>, options: CallOptions): Promise<unknown> {
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(asSdkError(signal.reason));
    const transport = this.transport;
    if (transport === undefined)
      return Promise.reject(new SdkError(SdkErrorCode.NotConnected, 'Not connected'));
    const id = takeRequestId(this);
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

  /** Calls `listener` once when the connection closes (whoever closes it: the client, the server, a failure). */
  whenClosed(listener: () => void): void {
    this.#onClosed.push(listener);
  }

  /**
   * The connection closed: every direct call in flight rejects with the SDK's error, after the SDK's own teardown,
   * as its own requests do.
   */
  protected override _onclose(): void {
    const calls = this.#direct.drain();
    this.#stopTimer();
    const closed = this.#onClosed;
    this.#onClosed = [];
    try {
      super._onclose();
    } finally {
      for (const listener of closed) listener();
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
    if (call.options.onprogress !== undefined) stopListeningForProgress(this, id);
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
    // Sent as the SDK sends it for its own requests, envelope and all, through the public `notification()`.
    this.notification({
      method: 'notifications/cancelled',
      params: { requestId: id, reason: String(why) },
    }).catch((error: unknown) => this.onerror?.(new Error(`Failed to send cancellation: ${error}`)));
    call.reject(asSdkError(why));
  }

  /**
   * An answer's result, decoded by the era's codec and validated by its result schema; a kind the codec leaves to
   * the role class (`input_required`) is handed to the SDK's driver, as a promise. Throws what the SDK rejects with.
   */
  #settle(
    codec: WireCodec,
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
    const decoded = (codec.decodeResult as NonNullable<WireCodec['decodeResult']>)(request.method, raw);
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
      // Each further leg is a request through the public `request()`, with the same result check.
      return this._resolveNonCompleteResult(decoded as Parameters<Client['_resolveNonCompleteResult']>[0], {
        codec: codec as Parameters<Client['_resolveNonCompleteResult']>[1]['codec'],
        request,
        resultSchema: schema as never,
        options,
        flowStartedAt: startedAt,
        retry: (next, legOptions) =>
          super.request(
            next === undefined ? { method: request.method } : { method: request.method, params: next },
            schema as never,
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
      const codec = wireCodecOf(this);
      const schema = codec === undefined ? null : resultSchemaFor(codec, request.method);
      if (schema !== null) {
        this.#reused = true;
        return super.request(request, schema, schemaOrOptions);
      }
    }
    return super.request(request, schemaOrOptions, maybeOptions);
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

/** What a cancelled request rejects with, as the SDK words it. */
function asSdkError(reason: unknown): SdkError {
  return reason instanceof SdkError ? reason : new SdkError(SdkErrorCode.RequestTimeout, String(reason));
}

/** A response's id as the SDK's `_onresponse` reads it, `Number(id)`: an answer with id `"7"` answers request 7. */
function responseId(message: JSONRPCMessage): number {
  const id = (message as { id?: unknown }).id;
  return typeof id === 'number' ? id : typeof id === 'string' ? Number(id) : Number.NaN;
}
