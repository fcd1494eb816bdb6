/**
 * Signals handed to the SDK. The SDK adds an 'abort' listener to the signal of every request and never removes
 * it, and an application signal shared by many calls (an agent's, a web request's) would then collect one
 * listener per call: Node warns (MaxListenersExceededWarning) and the listeners leak. Each request gets a signal
 * of its own instead, and a caller's signal carries one listener for all the requests that follow it.
 */

const followers = new WeakMap<AbortSignal, Set<AbortController>>();

/** A signal for one request that aborts with `parent`; call `dispose()` when the request is over. */
export function requestSignal(parent: AbortSignal): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, dispose: noop };
  }
  let set = followers.get(parent);
  if (set === undefined) {
    const created = new Set<AbortController>();
    set = created;
    followers.set(parent, created);
    parent.addEventListener(
      'abort',
      () => {
        for (const follower of created) follower.abort(parent.reason);
        created.clear();
      },
      { once: true },
    );
  }
  const own = set;
  own.add(controller);
  return { signal: controller.signal, dispose: () => own.delete(controller) };
}

function noop(): void {}
