/**
 * The pipeline's steps for invocations sent to a server (tool calls, resource reads, prompt gets): the hold stage,
 * which takes one of the server's call slots and gives the call a signal of its own, and the send stage's `ready`
 * hook, which finds a live client and decides again when the policy changed while the call waited.
 */
import type { Client } from '@modelcontextprotocol/client';
import { requestSignal } from '../net/signals.js';
import type { ServerConnection } from './connection.js';
import { type Invocation, type Next, proceed, provide, recheckIfChanged, type Stage } from './pipeline.js';

/** An invocation that goes to a server connection. */
export interface ConnectedInvocation extends Invocation {
  readonly server: string;
  /** The server's connection: known from the start (tool calls), or looked up by the hold stage. */
  connection: ServerConnection | undefined;
  /** The request timeout in ms, set with the connection. */
  timeoutMs: number;
  /** This call's own signal following the caller's (see signals.ts), set by the hold stage. */
  perCallSignal: AbortSignal | undefined;
  /** The client of the current attempt, set by {@link readyToSend}. */
  client: Client | undefined;
}

/** What {@link holdStage} adds: the connection whose slot the call holds. */
export interface Held {
  connection: ServerConnection;
}

/** What {@link readyToSend} adds: the live client the attempt is sent with. */
export interface Sendable {
  client: Client;
}

/**
 * The hold stage: the server must have a connection, the call takes one of its slots (or fails at once with
 * `OVERLOADED`), and gets a signal of its own that follows the caller's. Both are released however it ends.
 */
export function holdStage<C extends ConnectedInvocation, R>(
  requireConnection: (ctx: C) => ServerConnection,
): Stage<C, R, C & Held> {
  return (ctx, next) => {
    let acquired: ReturnType<ServerConnection['limiter']['acquire']>;
    try {
      const connection = requireConnection(ctx);
      provide(ctx, 'connection', connection);
      acquired = connection.limiter.acquire(ctx.signal);
    } catch (err) {
      return Promise.reject(err);
    }
    const held = ctx;
    // Without a limit the slot is taken at once: no promise, no extra turn.
    if (typeof acquired === 'function') return holdingSlot(held, next, acquired);
    return acquired.then((release) => holdingSlot(held, next, release));
  };
}

/** Runs the rest of the chain holding a call slot, with a signal of the call's own; both let go however it ends. */
function holdingSlot<C extends ConnectedInvocation & Held, R>(
  ctx: C,
  next: Next<C, R>,
  release: () => void,
): Promise<R> {
  // The SDK leaves a listener on the signal it gets: give it one of this call's own (see signals.ts).
  const perCall = ctx.signal === undefined ? undefined : requestSignal(ctx.signal);
  ctx.perCallSignal = perCall?.signal;
  const done = () => {
    perCall?.dispose();
    release();
  };
  return proceed(next, ctx).then(
    (result) => {
      done();
      return result;
    },
    (err: unknown) => {
      done();
      throw err;
    },
  );
}

/**
 * Gets an attempt ready: a live client (a ready connection's is taken as is: no promise, no turn; otherwise a
 * reconnect is waited out within the timeout), then a re-check when the policy changed while the call waited, so a
 * revoke still stops it.
 */
export function readyToSend<C extends ConnectedInvocation & Held>(
  ctx: C,
): (C & Sendable) | Promise<C & Sendable> {
  const client = ctx.connection.client;
  if (client !== undefined) return withClient(ctx, client);
  return ctx.connection
    .acquireClient(ctx.timeoutMs, ctx.signal)
    .then((acquired) => withClient(ctx, acquired));
}

function withClient<C extends ConnectedInvocation & Held>(
  ctx: C,
  client: Client,
): (C & Sendable) | Promise<C & Sendable> {
  provide(ctx, 'client', client);
  const rechecking = recheckIfChanged(ctx);
  if (rechecking === undefined) return ctx;
  const sendable = ctx;
  return rechecking.then(() => sendable);
}
