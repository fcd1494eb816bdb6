/**
 * Work deferred from import to first use (issue 15, import time): importing `mcp-interlock/interop` should cost
 * little more than importing the SDK client, so zod schemas are built, and code only some calls need is loaded,
 * when something first needs them.
 */
import { z } from 'zod';

/** A memoized getter: `build` runs at the first call, and every call returns what that one built. */
export function once<T>(build: () => T): () => T {
  let value: T | undefined;
  let built = false;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value as T;
  };
}

/** A module loaded with `import()` when first needed, and kept. */
export interface LazyModule<M> {
  /** The module once loaded; `undefined` before, so a hot path can use it without waiting. */
  readonly loaded: M | undefined;
  /** Loads it (once; later calls share the first load) and resolves with it. */
  load(): Promise<M>;
  /** Starts loading it without waiting; a failure surfaces at the next `load()`. */
  preload(): void;
}

/** Wraps `load` (an `() => import('./file.js')`) so that the module is imported once, at its first use. */
export function lazyModule<M>(load: () => Promise<M>): LazyModule<M> {
  let loaded: M | undefined;
  let loading: Promise<M> | undefined;
  const start = (): Promise<M> => {
    loading ??= load().then(
      (module) => {
        loaded = module;
        return module;
      },
      (err: unknown) => {
        // A failed load is tried again by the next caller rather than remembered for good.
        loading = undefined;
        throw err;
      },
    );
    return loading;
  };
  return {
    get loaded() {
      return loaded;
    },
    load: start,
    preload: () => {
      start().catch(() => {});
    },
  };
}

/**
 * A stand-in for a zod schema that is built at its first use: the first time anything touches it (`parse`,
 * `shape`, `instanceof`, composing it into another schema), `build` runs once and every operation goes to what
 * it returned. The stand-in is registered in zod's global registry with the schema's own metadata (its
 * `.describe()` text), so `z.toJSONSchema` of either reads the same.
 */
export function lazySchema<S extends z.ZodType>(build: () => S): S {
  let schema: S | undefined;
  const real = (): S => {
    if (schema === undefined) {
      schema = build();
      const meta = z.globalRegistry.get(schema);
      if (meta !== undefined) z.globalRegistry.add(standIn, meta);
    }
    return schema;
  };
  // The target stays an empty extensible object: every trap answers from the built schema, and descriptors are
  // reported configurable, as a proxy may for a property its own target lacks.
  const standIn = new Proxy(Object.create(null) as S, {
    get: (_, key) => Reflect.get(real(), key, real()),
    set: (_, key, value) => Reflect.set(real(), key, value, real()),
    has: (_, key) => Reflect.has(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(real(), key);
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
    },
    defineProperty: (_, key, descriptor) => Reflect.defineProperty(real(), key, descriptor),
    deleteProperty: (_, key) => Reflect.deleteProperty(real(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  });
  return standIn;
}
