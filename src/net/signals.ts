/**
 * Signals handed to the SDK and to undici, one per request. Both add an 'abort' listener to the signal of every
 * request: the SDK never removes it, and undici only when the request object is garbage-collected. A signal
 * shared by many requests (an agent's, a web request's, an HTTP transport's own) would then collect one listener
 * per request: Node warns (MaxListenersExceededWarning), every `addEventListener` scans the growing list, and
 * the SDK's listeners leak. Each request gets a signal of its own instead, and the shared signal carries one
 * listener for all the requests that follow it.
 */

/** The requests following one parent signal. */
interface Followers {
  /** Followers whose caller says when the request is over (`dispose`). */
  readonly held: Set<AbortController>;
  /** Followers held weakly, for requests whose end nobody reports (a fetch and its response body). */
  readonly weak: Set<WeakRef<AbortController>>;
  /** The size of `weak` at which collected entries are swept next. */
  sweepAt: number;
}

const followers = new WeakMap<AbortSignal, Followers>();

/** The first sweep of weak followers, and the least growth between two. */
const SWEEP_MIN = 256;

/** Key under which a weakly followed signal keeps its controller alive, as long as the request holds the signal. */
const CONTROLLER = Symbol('interlock.abortController');

function followersOf(parent: AbortSignal): Followers {
  let found = followers.get(parent);
  if (found === undefined) {
    const created: Followers = { held: new Set(), weak: new Set(), sweepAt: SWEEP_MIN };
    found = created;
    followers.set(parent, created);
    parent.addEventListener(
      'abort',
      () => {
        for (const follower of created.held) follower.abort(parent.reason);
        for (const ref of created.weak) ref.deref()?.abort(parent.reason);
        created.held.clear();
        created.weak.clear();
      },
      { once: true },
    );
  }
  return found;
}

/** A signal for one request that aborts with `parent`; call `dispose()` when the request is over. */
export function requestSignal(parent: AbortSignal): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, dispose: noop };
  }
  const { held } = followersOf(parent);
  held.add(controller);
  return { signal: controller.signal, dispose: () => held.delete(controller) };
}

/**
 * A signal for one request that aborts with `parent` (`parent` itself when already aborted), for a request whose
 * end is not reported: the signal keeps its controller alive while something holds the signal, and the entry of
 * a collected one is swept as the set grows.
 */
export function heldWhileUsedSignal(parent: AbortSignal): AbortSignal {
  if (parent.aborted) return parent;
  const found = followersOf(parent);
  const controller = new AbortController();
  Object.defineProperty(controller.signal, CONTROLLER, { value: controller });
  found.weak.add(new WeakRef(controller));
  if (found.weak.size >= found.sweepAt) {
    for (const ref of found.weak) if (ref.deref() === undefined) found.weak.delete(ref);
    found.sweepAt = Math.max(SWEEP_MIN, found.weak.size * 2);
  }
  return controller.signal;
}

/** How many weakly held request signals of `parent` are still tracked (tests). @internal */
export function weakFollowersOf(parent: AbortSignal): number {
  return followers.get(parent)?.weak.size ?? 0;
}

function noop(): void {}
