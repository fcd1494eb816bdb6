/**
 * Replicas without stickiness (issue 41): several gateway processes behind one balancer, and a caller whose
 * answer to a relayed question lands on a process other than the one holding its call. The state the caller
 * echoes names the holder's replica id (sealed with a key every replica shares, see {@link replicaStateKey});
 * the replica that got the answer forwards it to the holder over the fleet's store (pub/sub, one channel per
 * replica), the holder acknowledges at once, resumes the call, and sends back its next step: the result, a
 * failure, or the next question (whose state names the holder again). A holder that does not acknowledge in
 * time is gone: the round fails with `REPLICA_UNAVAILABLE`, nothing waits on it. The holder never answers one
 * parked call twice (the relay refuses a second round while one runs).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { GatewayReplicasConfig } from '../config/gateway-replicas.js';
import { ErrorCode, InterlockError, type InterlockErrorOptions, RequestCancelledError } from '../errors.js';
import type { StateStore } from '../state/types.js';

/** The store key of the fleet's shared sealing key, created once (SET NX) by the first replica. */
const STATE_KEY = 'gateway:replicas:state-key';

/** A caller's answers to a parked call, forwarded to the replica that holds it. */
export interface RoutedRound {
  /** The parked call's id, from the sealed state. */
  call: string;
  /** Principal and tool (and arguments) of the round, checked again by the holder. */
  binding: string;
  /** Which of the call's rounds the answers are for (an earlier one is refused). */
  round: number;
  responses: Record<string, unknown> | undefined;
}

/** The holder's next step, as it travels between replicas (an error travels as its code and message). */
export type RoutedStep =
  | { kind: 'done'; value: unknown }
  | { kind: 'failed'; code: string; message: string }
  | { kind: 'input'; inputRequests: Record<string, unknown>; requestState: string };

/** Resumes a parked call of this process with a forwarded round. */
export type RoutedRoundHandler = (round: RoutedRound, signal: AbortSignal) => Promise<RoutedStep>;

const StepSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('done'), value: z.unknown() }),
  z.object({ kind: z.literal('failed'), code: z.string(), message: z.string() }),
  z.object({
    kind: z.literal('input'),
    inputRequests: z.record(z.string(), z.unknown()),
    requestState: z.string(),
  }),
]);

const MessageSchema = z.discriminatedUnion('t', [
  z.object({
    t: z.literal('round'),
    rid: z.string(),
    from: z.string(),
    call: z.string(),
    binding: z.string(),
    round: z.number().int(),
    responses: z.record(z.string(), z.unknown()).optional(),
  }),
  z.object({ t: z.literal('cancel'), rid: z.string() }),
  z.object({ t: z.literal('ack'), rid: z.string() }),
  z.object({ t: z.literal('step'), rid: z.string(), step: StepSchema }),
]);
type Message = z.infer<typeof MessageSchema>;

/**
 * The process that holds a caller's call is gone, unreachable, or did not answer in time. Code
 * `REPLICA_UNAVAILABLE`; `operatorHint` says which replica and what to check.
 */
export class ReplicaUnavailableError extends InterlockError {
  /** For the operator, never in `message` (which reaches the caller). */
  readonly operatorHint: string;

  constructor(message: string, operatorHint: string, options: InterlockErrorOptions = {}) {
    super(ErrorCode.REPLICA_UNAVAILABLE, message, options);
    this.operatorHint = operatorHint;
  }
}

interface Outgoing {
  ack(): void;
  step(step: RoutedStep): void;
}

/** One replica's end of the routing: forwards rounds to holders, and serves rounds forwarded to it. */
export class ReplicaRouter {
  readonly id: string;
  readonly #store: StateStore;
  readonly #config: GatewayReplicasConfig;
  readonly #outgoing = new Map<string, Outgoing>();
  readonly #incoming = new Map<string, AbortController>();
  #unsubscribe: (() => Promise<void>) | undefined;
  #closed = false;
  /** Rounds this replica forwarded to a holder, and rounds it served for another replica. */
  readonly counts = { forwarded: 0, served: 0 };

  private constructor(store: StateStore, config: GatewayReplicasConfig, id: string) {
    this.#store = store;
    this.#config = config;
    this.id = id;
  }

  /** Subscribes this replica's channel; forwarded rounds go to `serve`. */
  static async open(
    store: StateStore,
    config: GatewayReplicasConfig,
    serve: RoutedRoundHandler,
  ): Promise<ReplicaRouter> {
    const router = new ReplicaRouter(store, config, config.id ?? randomUUID());
    router.#unsubscribe = await store.subscribe(channelOf(router.id), (text) => {
      const message = parse(text);
      if (message !== undefined) router.#receive(message, serve);
    });
    return router;
  }

  /**
   * Sends a caller's answers to `holder` and resolves with its next step. Rejects with `REPLICA_UNAVAILABLE`
   * when the holder does not take them within `ackTimeoutMs` or answer within `routeTimeoutMs`, and with the
   * signal's reason when the caller cancels (the holder is told, and cancels the call).
   */
  forward(holder: string, round: RoutedRound, signal: AbortSignal): Promise<RoutedStep> {
    const rid = randomUUID();
    const { ackTimeoutMs, routeTimeoutMs } = this.#config;
    this.counts.forwarded++;
    return new Promise<RoutedStep>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (this.#outgoing.delete(rid)) settle();
      };
      const cancel = () => this.#send(holder, { t: 'cancel', rid }).catch(() => undefined);
      const onAbort = () => {
        void cancel();
        finish(() => reject(signal.reason));
      };
      const arm = (ms: number, error: () => ReplicaUnavailableError) => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          void cancel();
          finish(() => reject(error()));
        }, ms);
        timer.unref();
      };
      this.#outgoing.set(rid, {
        ack: () =>
          arm(
            routeTimeoutMs,
            () =>
              new ReplicaUnavailableError(
                'The gateway process that holds this call did not finish the round in time; the call was cancelled. Call the tool again.',
                `Replica '${holder}' took the answer but sent no next step within gateway.replicas.routeTimeoutMs (${routeTimeoutMs} ms). Raise it for tools that run long after an answer.`,
              ),
          ),
        step: (step) => finish(() => resolve(step)),
      });
      arm(
        ackTimeoutMs,
        () =>
          new ReplicaUnavailableError(
            'The gateway process that holds this call is gone or does not answer; call the tool again.',
            `Replica '${holder}' did not take a forwarded answer within gateway.replicas.ackTimeoutMs (${ackTimeoutMs} ms): it stopped, or cannot reach the fleet's store.`,
          ),
      );
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.#send(holder, { t: 'round', rid, from: this.id, ...round }).catch((err: unknown) =>
        finish(() => reject(err)),
      );
    });
  }

  /** Stops serving: rounds being resumed here are cancelled, and rounds waiting on a holder fail. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const controller of this.#incoming.values()) {
      controller.abort(new RequestCancelledError('The gateway process that holds this call is closing.'));
    }
    await this.#unsubscribe?.().catch(() => undefined);
  }

  #receive(message: Message, serve: RoutedRoundHandler): void {
    switch (message.t) {
      case 'ack':
        this.#outgoing.get(message.rid)?.ack();
        return;
      case 'step':
        this.#outgoing.get(message.rid)?.step(message.step as RoutedStep);
        return;
      case 'cancel':
        this.#incoming
          .get(message.rid)
          ?.abort(new RequestCancelledError('The caller cancelled the call on another gateway process.'));
        return;
      case 'round':
        void this.#serve(message, serve);
    }
  }

  async #serve(message: Extract<Message, { t: 'round' }>, serve: RoutedRoundHandler): Promise<void> {
    if (this.#closed || this.#incoming.has(message.rid)) return;
    const controller = new AbortController();
    this.#incoming.set(message.rid, controller);
    this.counts.served++;
    // The forwarder gives up after routeTimeoutMs and tells the holder, which cancels the call; a forwarder that
    // is gone cannot tell, so the holder gives up by itself a little later.
    const timer = setTimeout(
      () =>
        controller.abort(
          new RequestCancelledError('The replica that forwarded the answer stopped waiting for this call.'),
        ),
      this.#config.routeTimeoutMs + this.#config.ackTimeoutMs,
    );
    timer.unref();
    try {
      await this.#send(message.from, { t: 'ack', rid: message.rid });
      const { call, binding, round, responses } = message;
      let step: RoutedStep;
      try {
        step = await serve({ call, binding, round, responses }, controller.signal);
      } catch (err) {
        step = failedStep(err);
      }
      await this.#send(message.from, { t: 'step', rid: message.rid, step });
    } catch {
      // The store failed: the forwarder's own timeout answers its caller.
    } finally {
      clearTimeout(timer);
      this.#incoming.delete(message.rid);
    }
  }

  #send(replica: string, message: Message): Promise<void> {
    return this.#store.publish(channelOf(replica), JSON.stringify(message));
  }
}

/**
 * The key that seals the state callers echo: `stateKey` from the config; else, with the fleet's store, one key
 * created once in the store and read by every replica; else a random key of this process.
 */
export async function replicaStateKey(
  config: GatewayReplicasConfig | undefined,
  store: StateStore | undefined,
): Promise<string | Uint8Array> {
  if (config?.stateKey !== undefined) return config.stateKey;
  if (store === undefined) return randomBytes(32);
  await store.compareAndSet(STATE_KEY, undefined, randomBytes(32).toString('base64url'));
  const key = await store.get(STATE_KEY);
  if (key === undefined || Buffer.byteLength(key, 'utf8') < 32) {
    throw new InterlockError(
      ErrorCode.STATE_INVALID,
      `The gateway's shared state key in the fleet's store ('${STATE_KEY}') is missing or shorter than 32 bytes. Delete it so that a replica creates a new one, or set gateway.replicas.stateKey.`,
    );
  }
  return key;
}

/** A failure as it travels between replicas: its code and message (what the caller would see anyway). */
export function failedStep(error: unknown): RoutedStep {
  return error instanceof InterlockError
    ? { kind: 'failed', code: error.code, message: error.message }
    : { kind: 'failed', code: 'INTERNAL', message: 'The gateway failed to run the call.' };
}

/**
 * A failure that came from another replica, as an error of this one: a coded failure keeps its code and message;
 * anything else stays what it was there, not an Interlock error (the caller gets the gateway's generic failure).
 */
export function routedError(step: Extract<RoutedStep, { kind: 'failed' }>): unknown {
  return step.code === 'INTERNAL' ? step : new InterlockError(step.code as ErrorCode, step.message);
}

function channelOf(replica: string): string {
  return `gateway:replica:${replica}`;
}

function parse(text: string): Message | undefined {
  try {
    const parsed = MessageSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
