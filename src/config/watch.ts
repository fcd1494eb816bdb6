/**
 * Hot reload of a policy file (issue 16): watches the file, and after each change that leaves a valid policy
 * hands it over (to `CapabilitySet.replaceRules`, or `SharedPolicy.publish` for a fleet). A change that leaves an
 * invalid file is reported and ignored: the last good policy stays in force.
 */
import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { Policy } from '../security/policy.js';
import { loadPolicyFile } from './load.js';

/** Quiet time after the last file event before the file is read (editors write in several steps). */
export const POLICY_WATCH_DEBOUNCE_MS = 100;

/** Options of {@link watchPolicyFile}. */
export interface WatchPolicyFileOptions {
  /** Receives each new valid policy (not the one the file holds when watching starts). */
  onPolicy: (policy: Policy) => void | Promise<void>;
  /** Receives a `ConfigError` for a change that left the file invalid (or missing), and errors of `onPolicy`. */
  onError?: ((error: unknown) => void) | undefined;
  /** For `${VAR}` expansion. @default process.env */
  env?: Readonly<Record<string, string | undefined>> | undefined;
}

/** A running watch; `close()` stops it. */
export interface PolicyWatch extends AsyncDisposable {
  /** The policy the file held when watching started. */
  readonly initial: Policy;
  close(): Promise<void>;
}

/**
 * Reads `path` (it must hold a valid policy: `ConfigError` otherwise), then watches it. The directory is watched,
 * not the file, so editors that replace the file (write a new one and rename it over) keep being followed.
 */
export async function watchPolicyFile(path: string, options: WatchPolicyFileOptions): Promise<PolicyWatch> {
  const file = resolve(path);
  const name = basename(file);
  const onError = options.onError ?? (() => {});
  let timer: NodeJS.Timeout | undefined;
  const initial = await loadPolicyFile(file, { env: options.env });
  let last = JSON.stringify(initial);
  let closed = false;
  const reload = async () => {
    try {
      const policy = await loadPolicyFile(file, { env: options.env });
      const text = JSON.stringify(policy);
      if (text === last || closed) return;
      last = text;
      await options.onPolicy(policy);
    } catch (err) {
      if (!closed) onError(err);
    }
  };
  const watcher: FSWatcher = watch(dirname(file), (_event, changed) => {
    if (changed !== null && changed !== name) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => void reload(), POLICY_WATCH_DEBOUNCE_MS);
  });
  watcher.on('error', onError);
  const close = async () => {
    closed = true;
    if (timer !== undefined) clearTimeout(timer);
    watcher.close();
  };
  return { initial, close, [Symbol.asyncDispose]: close };
}
