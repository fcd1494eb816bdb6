/**
 * One abort listener per caller's signal, not one per request.
 *
 * The MCP SDK's HTTP transports hand `fetch` the same long-lived signal on every request (the transport's, aborted
 * when it closes). undici's `Request` adds an abort listener to that signal and removes it only when the request
 * object is garbage-collected, so under load thousands of listeners pile up on one signal between collections:
 * Node then prints `MaxListenersExceededWarning` for every further request, and each `addEventListener` scans
 * the listeners already there (about a tenth of the client's CPU per call over HTTP at concurrency 16).
 *
 * `requestSignal` gives each request its own signal instead. The caller's signal gets one listener, which aborts
 * every request signal still in use, with the caller's reason. Request signals are held weakly: one that undici
 * no longer holds is collected with its controller, and its entry is swept as the set grows.
 */

/** The controller of a request signal, kept alive by the signal (held by undici for the request's life). */
const CONTROLLER = Symbol('interlock.abortController');

interface Relay {
  readonly live: Set<WeakRef<AbortController>>;
  /** The set's size at which dead entries are swept next. */
  sweepAt: number;
}

const relays = new WeakMap<AbortSignal, Relay>();

/** The first sweep, and the least growth between two. */
const SWEEP_MIN = 256;

/**
 * A signal for one request that aborts when `outer` does (at once when `outer` is already aborted). It adds no
 * listener to `outer` after the first request that passes it.
 */
export function requestSignal(outer: AbortSignal): AbortSignal {
  if (outer.aborted) return outer;
  let relay = relays.get(outer);
  if (relay === undefined) {
    const created: Relay = { live: new Set(), sweepAt: SWEEP_MIN };
    relay = created;
    relays.set(outer, created);
    outer.addEventListener(
      'abort',
      () => {
        for (const ref of created.live) ref.deref()?.abort(outer.reason);
        created.live.clear();
      },
      { once: true },
    );
  }
  const controller = new AbortController();
  Object.defineProperty(controller.signal, CONTROLLER, { value: controller });
  relay.live.add(new WeakRef(controller));
  if (relay.live.size >= relay.sweepAt) sweep(relay);
  return controller.signal;
}

/** Drops the entries of collected controllers; the next sweep waits until the set has doubled again. */
function sweep(relay: Relay): void {
  for (const ref of relay.live) if (ref.deref() === undefined) relay.live.delete(ref);
  relay.sweepAt = Math.max(SWEEP_MIN, relay.live.size * 2);
}

/** How many request signals of `outer` are still tracked (tests). @internal */
export function trackedRequestSignals(outer: AbortSignal): number {
  return relays.get(outer)?.live.size ?? 0;
}
