/**
 * The inbound chain (issue 43): every message a transport delivers passes a list of `(message, extra, next)` stages,
 * installed once per connection in a fixed, visible order, before the SDK's own dispatch. Nothing else in the
 * package wraps or assigns a transport's `onmessage`: the SDK's `Protocol.connect` assigns its dispatch, and this
 * module takes that as the chain's last step instead of letting it replace the chain.
 *
 * The order (see {@link inboundStages}):
 * 1. `result-type` reads a 2026-07-28 result without `resultType` as `complete`, as the spec says (results.ts);
 * 2. `task-handles` lifts a task handle answering one of our `tools/call` requests (task-handles.ts);
 * 3. `input-bounds` refuses an `input_required` round that is too large (input-rounds.ts);
 * 4. `direct-answers` settles an answer to a direct `tools/call` without the SDK's dispatch (client.ts);
 * then the SDK's dispatch.
 * @internal
 */
import type { JSONRPCMessage, MessageExtraInfo, Transport } from '@modelcontextprotocol/client';

/** Passes a message on to the rest of the chain. */
export type Deliver = (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

/** One step of the chain: hands the message (or one it made of it) to `next`, or consumes it. */
export interface InboundStage {
  readonly name: string;
  handle(message: JSONRPCMessage, extra: MessageExtraInfo | undefined, next: Deliver): void;
}

/** A chain installed on a transport: its stages in order, and how often each ran (for tests and diagnostics). */
export interface InboundChain {
  /** The stage names in the order a message passes them; `sdk-dispatch` is always last. */
  readonly stages: readonly string[];
  /** How many messages entered the chain. */
  readonly received: number;
  /** How many times the stage with this name ran (0 for a name not in the chain). */
  runs(stage: string): number;
}

/** The name of the chain's last step, the SDK's own dispatch. */
export const SDK_DISPATCH = 'sdk-dispatch';

/**
 * Installs `stages` on `transport`, once. The SDK's `connect` assigns its dispatch to `onmessage` afterwards: that
 * assignment sets the chain's last step, and reading `onmessage` gives the chain's entry (undefined until the SDK
 * assigned its dispatch, so the SDK never calls the chain from inside itself). Installing a second chain on the same
 * transport throws: a transport carries one connection.
 */
export function installInbound(transport: Transport, stages: readonly InboundStage[]): InboundChain {
  if (chains.has(transport)) throw new TypeError('An inbound chain is already installed on this transport');
  const counts = new Float64Array(stages.length + 2);
  let dispatch: Deliver | undefined;
  const last: Deliver = (message, extra) => {
    counts[stages.length + 1] = (counts[stages.length + 1] as number) + 1;
    dispatch?.(message, extra);
  };
  // Built back to front, once: each step holds the next, so a message costs one call per stage.
  let next: Deliver = last;
  for (let i = stages.length - 1; i >= 0; i--) {
    const stage = stages[i] as InboundStage;
    const after = next;
    next = (message, extra) => {
      counts[i + 1] = (counts[i + 1] as number) + 1;
      stage.handle(message, extra, after);
    };
  }
  const first = next;
  const entry: Deliver = (message, extra) => {
    counts[0] = (counts[0] as number) + 1;
    first(message, extra);
  };
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    enumerable: true,
    get: () => (dispatch === undefined ? undefined : entry),
    set: (handler: Deliver | undefined) => {
      dispatch = handler;
    },
  });
  const names = [...stages.map((stage) => stage.name), SDK_DISPATCH];
  const chain: InboundChain = {
    stages: names,
    get received() {
      return counts[0] as number;
    },
    runs(stage) {
      const at = names.indexOf(stage);
      return at === -1 ? 0 : (counts[at + 1] as number);
    },
  };
  chains.add(transport);
  return chain;
}

/** The transports a chain is installed on. */
const chains = new WeakSet<Transport>();

/** What {@link inboundStages} puts in the chain besides the client's own stage. */
export interface InboundParts {
  /** Reads an absent `resultType` as `complete` on 2026-07-28 (results.ts). */
  resultType: InboundStage;
  /** Lifts task handles (task-handles.ts); undefined: none. */
  taskHandles?: InboundStage | undefined;
  /** Bounds `input_required` rounds (input-rounds.ts); undefined: none. */
  inputBounds?: InboundStage | undefined;
  /** Settles answers to direct calls (client.ts). */
  directAnswers: InboundStage;
}

/** The chain's stages in their one order (see the module comment). */
export function inboundStages(parts: InboundParts): InboundStage[] {
  const stages: InboundStage[] = [parts.resultType];
  if (parts.taskHandles !== undefined) stages.push(parts.taskHandles);
  if (parts.inputBounds !== undefined) stages.push(parts.inputBounds);
  stages.push(parts.directAnswers);
  return stages;
}
