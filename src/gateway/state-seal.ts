/**
 * Seals the state a 2026-07-28 caller echoes between the rounds of a relayed call (issue 41): AES-256-GCM under a
 * key derived (HKDF-SHA-256) from the gateway's state key, so the caller can neither read what is inside (an
 * upstream server's own request state, the mapping of question keys, the holder replica) nor alter it, and a state
 * past its expiry is refused. Every replica given the same key opens what another sealed.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { InterlockError } from '../errors.js';

/** Seals payloads of type `T` into opaque strings, and opens them. */
export interface StateSealer<T> {
  mint(payload: T): Promise<string>;
  /** The payload; throws when the state was not sealed with this key, was altered, or has expired. */
  verify(state: string): Promise<T>;
}

const VERSION = 'v1';
const INFO = 'interlock gateway request state v1';

/** A sealer for `key` (32 bytes or more of secret), whose states are valid for `ttlSeconds`. */
export function createStateSealer<T>(
  key: string | Uint8Array,
  ttlSeconds: number,
  now: () => number = Date.now,
): StateSealer<T> {
  const secret = typeof key === 'string' ? Buffer.from(key, 'utf8') : Buffer.from(key);
  const aesKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), INFO, 32));
  const aad = Buffer.from(VERSION);
  return {
    async mint(payload) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', aesKey, iv);
      cipher.setAAD(aad);
      const plain = Buffer.from(JSON.stringify({ exp: now() + ttlSeconds * 1000, payload }), 'utf8');
      const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
      return [VERSION, iv, sealed, cipher.getAuthTag()]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.');
    },
    async verify(state) {
      const parts = state.split('.');
      if (parts.length !== 4 || parts[0] !== VERSION) throw invalid('not a sealed gateway state');
      const [, iv, sealed, tag] = parts.map((part) => Buffer.from(part, 'base64url'));
      if (iv?.length !== 12 || tag?.length !== 16 || sealed === undefined) {
        throw invalid('not a sealed gateway state');
      }
      const decipher = createDecipheriv('aes-256-gcm', aesKey, iv);
      decipher.setAAD(aad);
      decipher.setAuthTag(tag);
      // Throws when the state was altered or sealed under another key.
      const plain = Buffer.concat([decipher.update(sealed), decipher.final()]).toString('utf8');
      const opened = JSON.parse(plain) as { exp: number; payload: T };
      if (!(opened.exp > now())) throw invalid('the sealed gateway state has expired');
      return opened.payload;
    },
  };
}

/** A state the caller echoed that cannot be opened (the relay answers it as a call it does not hold). */
function invalid(message: string): InterlockError {
  return new InterlockError('STATE_INVALID', message);
}
