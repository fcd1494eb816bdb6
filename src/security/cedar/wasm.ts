/**
 * The one seam to Cedar's engine (`@cedar-policy/cedar-wasm`, issue 40). The wasm module is compiled when first
 * needed, never at import: importing the security area loads no Cedar.
 */
import { createRequire } from 'node:module';
import { once } from '../../lazy.js';

/** Cedar's JavaScript API (the Node.js build). */
export type CedarWasm = typeof import('@cedar-policy/cedar-wasm/nodejs');
export type {
  DetailedError,
  EntityJson,
  PolicyJson,
} from '@cedar-policy/cedar-wasm/nodejs';

/** Cedar's module, loaded (and its wasm compiled, synchronously) at the first call. */
export const cedar = once((): CedarWasm => {
  const require = createRequire(import.meta.url);
  return require('@cedar-policy/cedar-wasm/nodejs') as CedarWasm;
});

/** Cedar's messages, one per line, with Cedar's help where it gives one. */
export function cedarMessages(errors: readonly { message: string; help?: string | null }[]): string {
  return errors.map((e) => (e.help ? `${e.message} (${e.help})` : e.message)).join('; ');
}
