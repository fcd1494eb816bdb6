/**
 * Relays the requests upstream servers make during a call (elicitation, sampling) to the downstream client that
 * made the call (issue 17). Each request is decided twice: by the project policy (the manager's gate, before the
 * relay is asked) and by the caller's own set (`mcp:{server}:elicitation|sampling` / `request`, audited); only
 * then does it reach the downstream client, as a multi-round-trip `input_required` answer to its `tools/call`.
 * A 2026-07-28 client answers it and calls again with the responses; for a 2025-era client the SDK's shim sends
 * real requests over the client's connection. Either way the upstream call waits in this process meanwhile,
 * except a 2026-07-28 upstream's: its round is handed to the caller, sealed, and continued by any replica (41).
 *
 * Which downstream call a request belongs to: the call whose async context it runs in, while that call runs.
 * Interlock answers a 2026-07-28 server's input rounds inside the call that got them, so those are always
 * attributed. A 2025-era server's request over stdio arrives on the connection, naming no call, possibly after
 * the call that caused it ended: it is declined (issue 38), unless the server is listed in `routeUnattributed`,
 * which sends it to the one caller with calls in flight to that server (refused when several callers have).
 *
 * Each call that waits for its caller's answer holds an upstream call open: their number is bounded per caller
 * and in all (`maxParkedCallsPerPrincipal`, `maxParkedCalls`), and a call beyond a bound is refused with
 * `OVERLOADED` before it reaches the server.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes, randomUUID } from 'node:crypto';
import type {
  CreateMessageRequestParams,
  CreateMessageResult,
  CreateMessageResultWithTools,
  ElicitRequestFormParams,
  ElicitResult,
} from '@modelcontextprotocol/client';
import { type InputRequest, inputRequired } from '@modelcontextprotocol/server';
import {
  type ServerRequestRelayConfig,
  type ServerRequestRelayOptions,
  ServerRequestRelayOptionsSchema,
} from '../config/gateway-relay.js';
import { type GatewayReplicasOptions, GatewayReplicasOptionsSchema } from '../config/gateway-replicas.js';
import {
  ClosedError,
  ConfigError,
  OverloadedError,
  PermissionDeniedError,
  RequestCancelledError,
  ServerRequestRefusedError,
} from '../errors.js';
import type { UrlElicitationRequest } from '../interop/elicitation.js';
import type { CapabilityView } from '../interop/manager.js';
import {
  type ServerRequestContext,
  type ServerRequestKind,
  type ServerRequestOptions,
  samplingConditionArgs,
} from '../interop/server-requests.js';
import { isJsonObject } from '../json.js';
import { deferInput, type HandedOffRound, type InputRoundControl } from '../protocol/input-rounds.js';
import { resourceFor } from '../security/pattern.js';
import type { Approver } from '../security/types.js';
import type { StateStore } from '../state/types.js';
import { toConfigIssues } from '../zod-issues.js';
import { PendingCall } from './pending-call.js';
import type { Principal } from './principals.js';
import {
  failedStep,
  ReplicaRouter,
  type RoutedRound,
  type RoutedStep,
  replicaStateKey,
  routedError,
} from './replicas.js';
import { continuation, handOff, type SealedUpstream } from './sealed-rounds.js';
import { createStateSealer } from './state-seal.js';

/** One downstream caller's call, while it runs. */
interface Caller {
  principal: Principal;
  view: CapabilityView;
  /** The upstream server the call went to. */
  server: string;
  /** Whether the downstream client declared what a request needs (else it is refused here, not sent). */
  supports(need: DownstreamNeed): boolean;
  call: PendingCall;
}

/** What a relayed request needs the downstream client to have declared. */
export type DownstreamNeed = 'elicitation.form' | 'elicitation.url' | 'sampling' | 'sampling.tools';

/** What the downstream handler returns next: the call's result, or input the client must give first. */
export type RelayStep<T> =
  | { kind: 'done'; value: T }
  | { kind: 'failed'; error: unknown }
  | { kind: 'input'; inputRequests: Record<string, InputRequest>; requestState: string };

/** What the state a client echoes holds: the parked call, what it is bound to, and the replica that holds it. */
interface SealedState {
  id: string;
  binding: string;
  replica: string;
  /** Which of the call's rounds this state asks for: an answer to an earlier one is refused. */
  round: number;
  /** A 2026-07-28 upstream's round handed to the caller: nothing is held, any replica continues the call. */
  upstream?: SealedUpstream | undefined;
}

function sealer(key: string | Uint8Array) {
  return createStateSealer<SealedState>(key, 24 * 60 * 60);
}

/** A round's answers that no process holds a call for (or that name another caller's call). */
function notHeld(server?: string): PermissionDeniedError {
  return new PermissionDeniedError({
    resource: server === undefined ? 'mcp:*' : `mcp:${server}`,
    action: 'request',
    reason:
      'the input answers a call the gateway does not hold (it ended, waited longer than the input timeout, is being answered already, or the state was altered or names another call); call the tool again.',
  });
}

/** One key per caller: how it authenticated and its subject, as an unambiguous tuple. */
function ownerOf(principal: Principal): string {
  return JSON.stringify([principal.via, principal.subject]);
}

/**
 * The relay between the gateway's upstream servers and its downstream clients. Create it before the manager,
 * hand {@link ServerRequestRelay.handlers} to the manager, and the relay to the `Gateway`.
 */
export class ServerRequestRelay {
  readonly #scope = new AsyncLocalStorage<Caller>();
  readonly #byServer = new Map<string, Set<Caller>>();
  readonly #pending = new Map<string, PendingCall>();
  #options: ServerRequestRelayConfig;
  /**
   * Seals the state a 2026-07-28 client echoes: bound to the principal, the tool and its arguments, useless to
   * anyone else; a per-process key until {@link replicate} gives the fleet's.
   */
  #codec = sealer(randomBytes(32));
  /** This process's replica id, named in the state it seals. */
  #replica: string = randomUUID();
  #router: ReplicaRouter | undefined;

  constructor(options: ServerRequestRelayOptions = {}) {
    this.#options = parseOptions(options, 'serverRequests');
  }

  /**
   * Replaces the options (the gateway applies its `serverRequests` section this way, since the relay is made
   * before the project file is read). Calls already waiting keep their timers.
   */
  configure(options: ServerRequestRelayOptions, path = 'serverRequests'): void {
    this.#options = parseOptions(options, path);
  }

  /** The manager options that send elicitation and sampling requests here. */
  get handlers(): Pick<
    ServerRequestOptions,
    'onElicitation' | 'onUrlElicitation' | 'onSampling' | 'samplingWithTools'
  > {
    return {
      onElicitation: (params, context) => this.#elicit(params, context),
      onUrlElicitation: (request, context) => this.#elicitUrl(request, context),
      onSampling: (params, context) => this.#sample(params, context),
      samplingWithTools: true,
    };
  }

  /**
   * Decides the caller's `ask` rules by asking the caller: a form elicitation to the client that made the call
   * ("Allow this call?"), answered yes only by an accepted form with `approve: true`. A client that cannot be
   * asked (no elicitation declared, a 2025-era client over HTTP) gets a denial.
   */
  readonly approver: Approver = async (request) => {
    const caller = this.#scope.getStore();
    if (caller === undefined || !caller.supports('elicitation.form')) return false;
    const name = request.tool === undefined ? request.resource : `${request.server}/${request.tool}`;
    const args = JSON.stringify(request.context?.args ?? {});
    const message = [
      `Allow ${request.action} of ${name}?`,
      `Arguments: ${args.length > 500 ? `${args.slice(0, 500)}…` : args}`,
      `Asked by rule ${request.decision.ruleId ?? '(unnamed)'}: ${request.decision.reason}`,
    ].join('\n');
    try {
      const answer = elicitResultOf(
        await caller.call.ask(
          inputRequired.elicit({
            message,
            requestedSchema: {
              type: 'object',
              properties: { approve: { type: 'boolean', title: 'Allow this call' } },
              required: ['approve'],
            },
          }),
          caller.call.abort.signal,
        ),
      );
      return answer.action === 'accept' && answer.content?.approve === true;
    } catch {
      return false;
    }
  };

  /** Rounds forwarded to the replica that holds their call, and rounds served here for another replica. */
  get routed(): { forwarded: number; served: number } {
    return { ...(this.#router?.counts ?? { forwarded: 0, served: 0 }) };
  }

  /** Calls waiting for a downstream answer (for a graceful close). */
  get waiting(): number {
    return this.#pending.size;
  }

  /**
   * @internal The gateway's downstream `tools/call` handler drives this.
   * Runs one round of a downstream call. The first round (no `state`) starts `work`; a later round carries the
   * client's answers and the state it was given, and resumes the call that asked.
   */
  async round<T>(
    target: Omit<Caller, 'call'>,
    round: {
      state: unknown;
      responses: Record<string, unknown> | undefined;
      signal: AbortSignal;
      binding: string;
    },
    work: (signal: AbortSignal, rounds: InputRoundControl) => Promise<T>,
  ): Promise<RelayStep<T>> {
    let resume: InputRoundControl['resume'];
    if (round.state !== undefined) {
      const sealed = await this.#open(round.state, round.binding);
      if (sealed === undefined) return { kind: 'failed', error: notHeld(target.server) };
      if (sealed.upstream !== undefined) {
        // Issue 41: the upstream's round comes back sealed; the call starts again here, decided again.
        resume = continuation(sealed.upstream, target.server, round.responses);
        if (resume === undefined) return { kind: 'failed', error: notHeld(target.server) };
      } else if (sealed.replica !== this.#replica) {
        // Another replica holds the call: the answers go there, and its next step comes back here.
        if (this.#router === undefined) return { kind: 'failed', error: notHeld(target.server) };
        try {
          const step = await this.#router.forward(
            sealed.replica,
            { call: sealed.id, binding: round.binding, round: sealed.round, responses: round.responses },
            round.signal,
          );
          if (step.kind === 'failed') return { kind: 'failed', error: routedError(step) };
          if (step.kind === 'done') return { kind: 'done', value: step.value as T };
          return step as RelayStep<T>;
        } catch (error) {
          return { kind: 'failed', error };
        }
      }
      if (resume === undefined) {
        const call = this.#resumable(sealed.id, round.binding, sealed.round);
        if (call === undefined) return { kind: 'failed', error: notHeld(target.server) };
        call.disarm();
        call.answer(round.responses);
        return this.#drive<T>(call, round);
      }
    }
    const owner = ownerOf(target.principal);
    // Refused before the upstream call starts: the server never sees a call that could not wait.
    const full = this.#full(owner);
    if (full !== undefined) return { kind: 'failed', error: full };
    const call = new PendingCall(owner, round.binding);
    const caller: Caller = { ...target, call };
    const callers = this.#byServer.get(target.server) ?? new Set<Caller>();
    this.#byServer.set(target.server, callers);
    callers.add(caller);
    const rounds: InputRoundControl = {
      resume,
      handOff: (handed) => {
        call.handedOff = { server: target.server, round: handed };
      },
    };
    call.result = this.#scope
      .run(caller, () => work(call.abort.signal, rounds))
      .then(
        (value) => {
          call.settled = { ok: true, value };
        },
        (error: unknown) => {
          call.settled = { ok: false, error };
        },
      )
      .finally(() => {
        callers.delete(caller);
        if (callers.size === 0) this.#byServer.delete(target.server);
        call.end(
          () =>
            new RequestCancelledError(
              'The call that made this request ended before the downstream client answered it.',
              { server: target.server },
            ),
        );
      });
    return this.#drive<T>(call, round);
  }

  /**
   * Runs gateway replicas (issue 41): the key that seals the state callers echo is the fleet's (config or store),
   * and with the fleet's store, answers that land on another replica are routed to this one when it holds the
   * call (and from this one to the holder). The gateway calls it before it listens.
   */
  async replicate(options: GatewayReplicasOptions | undefined, store: StateStore | undefined): Promise<void> {
    const parsed = GatewayReplicasOptionsSchema.safeParse(options ?? {});
    if (!parsed.success) {
      throw new ConfigError('Invalid gateway replica options.', {
        issues: toConfigIssues(parsed.error, 'gateway.replicas'),
      });
    }
    this.#codec = sealer(await replicaStateKey(parsed.data, store));
    if (store === undefined) return;
    this.#router = await ReplicaRouter.open(store, parsed.data, (routed, signal) =>
      this.#serveRouted(routed, signal),
    );
    this.#replica = this.#router.id;
  }

  /** A round another replica forwarded: the caller's answers to a call this process holds. */
  async #serveRouted(routed: RoutedRound, signal: AbortSignal): Promise<RoutedStep> {
    const call = this.#resumable(routed.call, routed.binding, routed.round);
    if (call === undefined) return failedStep(notHeld());
    call.disarm();
    call.answer(routed.responses);
    const step = await this.#drive<unknown>(call, { signal, binding: routed.binding });
    if (step.kind === 'failed') return failedStep(step.error);
    return step as RoutedStep;
  }

  /**
   * The parked call a round resumes: held here, bound to the same caller, tool and arguments, not being resumed
   * by another round, and parked at the round the state names (an answer to an earlier round is stale).
   */
  #resumable(id: string, binding: string, round: number): PendingCall | undefined {
    const call = this.#pending.get(id);
    if (call === undefined || call.binding !== binding || call.busy || call.rounds !== round)
      return undefined;
    return call;
  }

  /** Waits for the call's next event: its end, or questions for the client (then it parks until answered). */
  async #drive<T>(call: PendingCall, round: { signal: AbortSignal; binding: string }): Promise<RelayStep<T>> {
    call.busy = true;
    try {
      // The client cancelling this round cancels the call; between rounds nothing is listening.
      const onAbort = () => call.fail(round.signal.reason);
      round.signal.addEventListener('abort', onAbort, { once: true });
      try {
        await call.waitForEvent(round.signal);
      } finally {
        round.signal.removeEventListener('abort', onAbort);
      }
      // Cancelled by the client: the upstream call was cancelled with it; its end is awaited, never left behind.
      if (round.signal.aborted) await call.result;
      const settled = call.settled;
      if (call.handedOff !== undefined) {
        this.#pending.delete(call.id);
        return this.#handedOff(call, round.binding, call.handedOff);
      }
      if (settled !== undefined) {
        this.#pending.delete(call.id);
        return settled.ok
          ? { kind: 'done', value: settled.value as T }
          : { kind: 'failed', error: settled.error };
      }
      if (!this.#pending.has(call.id)) {
        // Calls of the same caller started together: the bound holds when they park, too.
        const full = this.#full(call.owner);
        if (full !== undefined) {
          call.fail(full);
          await call.result;
          return { kind: 'failed', error: full };
        }
      }
      const inputRequests = call.unasked() ?? {};
      call.rounds++;
      this.#pending.set(call.id, call);
      call.armTimeout(this.#options.inputTimeoutMs, () => this.#pending.delete(call.id));
      return {
        kind: 'input',
        inputRequests,
        requestState: await this.#codec.mint({
          id: call.id,
          binding: round.binding,
          replica: this.#replica,
          round: call.rounds,
        }),
      };
    } finally {
      call.busy = false;
    }
  }

  /** A 2026-07-28 upstream's round for the caller: its questions, and the rest sealed in the state it echoes. */
  async #handedOff<T>(
    call: PendingCall,
    binding: string,
    { server, round: handed }: { server: string; round: HandedOffRound },
  ): Promise<RelayStep<T>> {
    const { inputRequests, upstream } = handOff(server, handed, this.#options.inputTimeoutMs);
    const requestState = await this.#codec.mint({
      id: call.id,
      binding,
      replica: this.#replica,
      round: handed.round,
      upstream,
    });
    return { kind: 'input', inputRequests, requestState };
  }

  /** Cancels every call that waits for a downstream answer, and stops routing. */
  close(): void {
    for (const call of this.#pending.values()) {
      call.fail(
        new ClosedError('The gateway is closing: a call waiting for a downstream answer was cancelled.'),
      );
    }
    this.#pending.clear();
    void this.#router?.close();
  }

  /** Why one more call of `owner` may not wait for answers now, or undefined when it may. */
  #full(owner: string): OverloadedError | undefined {
    const { maxParkedCalls, maxParkedCallsPerPrincipal } = this.#options;
    if (this.#pending.size >= maxParkedCalls) {
      return new OverloadedError(
        `The gateway already holds ${maxParkedCalls} calls waiting for their callers' answers, its limit; answer or cancel a waiting call, or try again later.`,
      );
    }
    let own = 0;
    for (const call of this.#pending.values()) if (call.owner === owner) own++;
    if (own >= maxParkedCallsPerPrincipal) {
      return new OverloadedError(
        `You already have ${own} calls waiting for your answers, the limit per caller; answer or cancel one of them, then call again.`,
      );
    }
    return undefined;
  }

  /** The sealed state's payload, when it verifies and is bound to this round's principal, tool and arguments. */
  async #open(state: unknown, binding: string): Promise<SealedState | undefined> {
    if (typeof state !== 'string') return undefined;
    try {
      const payload = await this.#codec.verify(state);
      return payload.binding === binding ? payload : undefined;
    } catch {
      return undefined;
    }
  }

  /** The downstream call a request of `server` belongs to, or why there is none. */
  #callerFor(server: string): Caller | string {
    const scoped = this.#scope.getStore();
    // Only while its call runs: a context can outlive the call it belongs to (e.g. a connection made during it).
    if (scoped !== undefined && scoped.server === server && scoped.call.settled === undefined) return scoped;
    if (!this.#options.routeUnattributed.includes(server)) {
      return 'the request names no call in flight, so the gateway cannot tell which caller it is for';
    }
    const callers = this.#byServer.get(server);
    if (callers === undefined || callers.size === 0) {
      return 'no downstream call to this server is in flight to relay it to';
    }
    if (callers.size > 1) {
      return 'several downstream calls to this server are in flight and its request does not say which one it belongs to';
    }
    return callers.values().next().value as Caller;
  }

  /**
   * Asks the caller, after both decisions: a 2026-07-28 upstream's question is handed back with its round (the
   * call does not wait here, issue 41); any other waits in the call for the caller's next round.
   */
  #ask(caller: Caller, request: InputRequest, signal: AbortSignal): Promise<unknown> {
    return deferInput(request) ?? caller.call.ask(request, signal);
  }

  /** The caller's own set decides the request (audited); a refusal throws. */
  async #decide(
    caller: Caller,
    server: string,
    kind: ServerRequestKind,
    args: Record<string, unknown>,
  ): Promise<void> {
    try {
      await caller.view.authorizeServerRequest(server, kind, args, { principal: caller.principal.subject });
    } catch (err) {
      if (err instanceof PermissionDeniedError) {
        throw new ServerRequestRefusedError(
          { server, kind, resource: err.resource, reason: err.reason, byPolicy: true, rule: err.rule },
          { cause: err },
        );
      }
      throw err;
    }
  }

  async #elicit(params: ElicitRequestFormParams, context: ServerRequestContext): Promise<ElicitResult> {
    const caller = this.#callerFor(context.server);
    if (typeof caller === 'string') return { action: 'decline' };
    try {
      await this.#decide(caller, context.server, 'elicitation', { mode: 'form', message: params.message });
    } catch (err) {
      if (err instanceof ServerRequestRefusedError) return { action: 'decline' };
      throw err;
    }
    if (!caller.supports('elicitation.form')) return { action: 'decline' };
    try {
      return elicitResultOf(await this.#ask(caller, inputRequired.elicit(params), context.signal));
    } catch {
      // Timed out, cancelled, or the call ended: the question goes unanswered.
      return { action: 'cancel' };
    }
  }

  async #elicitUrl(
    request: UrlElicitationRequest,
    context: ServerRequestContext,
  ): Promise<{ action: 'accept' | 'decline' | 'cancel' }> {
    const caller = this.#callerFor(context.server);
    if (typeof caller === 'string') return { action: 'decline' };
    const { message, url, host, punycode } = request;
    try {
      await this.#decide(caller, context.server, 'elicitation', {
        mode: 'url',
        message,
        url,
        host,
        punycode,
      });
    } catch (err) {
      if (err instanceof ServerRequestRefusedError) return { action: 'decline' };
      throw err;
    }
    if (!caller.supports('elicitation.url')) return { action: 'decline' };
    try {
      const answer = await this.#ask(caller, inputRequired.elicitUrl({ message, url }), context.signal);
      return { action: elicitResultOf(answer).action };
    } catch {
      return { action: 'cancel' };
    }
  }

  async #sample(
    params: CreateMessageRequestParams,
    context: ServerRequestContext,
  ): Promise<CreateMessageResult | CreateMessageResultWithTools> {
    const { server } = context;
    const caller = this.#callerFor(server);
    if (typeof caller === 'string') {
      throw new ServerRequestRefusedError({
        server,
        kind: 'sampling',
        resource: resourceFor.serverRequest(server, 'sampling'),
        reason: caller,
        byPolicy: false,
      });
    }
    await this.#decide(caller, server, 'sampling', samplingConditionArgs(params));
    const need = (params.tools ?? []).length > 0 ? 'sampling.tools' : 'sampling';
    if (!caller.supports(need)) {
      throw new ServerRequestRefusedError({
        server,
        kind: 'sampling',
        resource: resourceFor.serverRequest(server, 'sampling'),
        reason: `the downstream client did not declare ${need === 'sampling' ? 'sampling' : 'sampling with tools'}, or cannot be asked (a 2025-era client over HTTP has no session to ask it on)`,
        byPolicy: false,
      });
    }
    const answer = await this.#ask(caller, inputRequired.createMessage(params), context.signal);
    if (typeof answer !== 'object' || answer === null || !('content' in answer) || !('model' in answer)) {
      throw new ServerRequestRefusedError({
        server,
        kind: 'sampling',
        resource: resourceFor.serverRequest(server, 'sampling'),
        reason: 'the downstream client answered the sampling request with something that is not a message',
        byPolicy: false,
      });
    }
    return answer as CreateMessageResult;
  }
}

/** An elicitation answer from the client, checked: anything but accept/decline/cancel is a cancel. */
function elicitResultOf(answer: unknown): ElicitResult {
  const value = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<string, unknown>;
  const action = value.action;
  if (action === 'accept') {
    const content = value.content;
    return isJsonObject(content) ? { action, content: content as ElicitResult['content'] } : { action };
  }
  if (action === 'decline') return { action };
  return { action: 'cancel' };
}

function parseOptions(options: ServerRequestRelayOptions, path: string): ServerRequestRelayConfig {
  const parsed = ServerRequestRelayOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new ConfigError('Invalid server request relay options.', {
      issues: toConfigIssues(parsed.error, path),
    });
  }
  return parsed.data;
}
