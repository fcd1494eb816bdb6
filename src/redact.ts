/**
 * Secrets in text: which names hold secrets, and masking known secret values out of text that came from
 * elsewhere (a server's error body, a JSON-RPC error message, a stderr line, CLI output). One rule for every area.
 */

/** Shortest value that is masked: shorter ones (`1`, `true`, `warn`) would garble output and are no secrets. */
export const MIN_SECRET_LENGTH = 6;

/** Names of headers, variables and fields whose values are secrets. */
export const SECRET_NAME = /token|secret|passw|passphrase|key|auth|cookie|credential|bearer|session/i;

/** What replaces a secret. */
export const MASK = '***';

/** The value and, for `Scheme credentials` forms (`Bearer abc...`), the credentials alone. */
function forms(value: string): string[] {
  const credentials = /^\S+\s+(\S{6,})$/.exec(value)?.[1];
  return credentials === undefined ? [value] : [value, credentials];
}

/**
 * How much of a text is kept past a cut until it is masked: a secret of up to this many characters that starts
 * before the cut is then whole when masked (issue 38). Used where text arrives piece by piece (a stderr line without
 * an end, an error body read to a bound).
 */
export const MASK_LOOKAHEAD_CHARS = 16 * 1024;

/**
 * `text` masked, then cut to `max` characters, `marker(n)` appended when `n` characters were cut. In this order
 * everywhere a text is both masked and cut: cut first, a secret straddling the cut would be masked in neither part
 * and its head would stay readable (issue 38).
 */
export function maskThenCut(
  text: string,
  mask: ((text: string) => string) | undefined,
  max: number,
  marker: (cut: number) => string = () => '…',
): string {
  const masked = mask === undefined ? text : mask(text);
  return masked.length <= max ? masked : `${masked.slice(0, max)}${marker(masked.length - max)}`;
}

/** A function that replaces every occurrence of each secret with `***` (longest secrets first). */
export function createMasker(secrets: Iterable<string>): (text: string) => string {
  const list = [...new Set(secrets)].filter((s) => s.length >= MIN_SECRET_LENGTH);
  list.sort((a, b) => b.length - a.length);
  if (list.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const secret of list) if (out.includes(secret)) out = out.split(secret).join(MASK);
    return out;
  };
}

/**
 * The secrets one manager (or HTTP stack) has sent or been given, growing as it learns new ones (a refreshed
 * token, a helper's new header). Masking happens only on error paths, so the cost of a call stays as it was.
 */
export class SecretRedactor {
  readonly #secrets = new Set<string>();
  #mask: ((text: string) => string) | undefined;

  /** Adds secret values (and the credentials part of `Scheme credentials` values). Short values are ignored. */
  add(...values: readonly (string | undefined)[]): void {
    for (const value of values) {
      if (value === undefined || value.length < MIN_SECRET_LENGTH) continue;
      for (const form of forms(value)) {
        if (this.#secrets.has(form)) continue;
        this.#secrets.add(form);
        // JSON-escaped too: an error body may quote the value inside a JSON string.
        const escaped = JSON.stringify(form).slice(1, -1);
        if (escaped !== form) this.#secrets.add(escaped);
        this.#mask = undefined;
      }
    }
  }

  /** Adds the values of secret-named entries of a header or env map. */
  addNamed(map: Readonly<Record<string, string | undefined>> | undefined): void {
    if (map === undefined) return;
    for (const [name, value] of Object.entries(map)) if (SECRET_NAME.test(name)) this.add(value);
  }

  /** `text` with every known secret replaced by `***`. */
  mask(text: string): string {
    if (this.#secrets.size === 0) return text;
    this.#mask ??= createMasker(this.#secrets);
    return this.#mask(text);
  }

  /**
   * An error whose message and causes no longer hold a known secret: `err` itself when nothing had to change,
   * otherwise a copy of the chain with masked messages (same class name and code; stacks dropped, since they
   * repeat the message).
   */
  maskError<E extends Error>(err: E): E {
    if (this.#secrets.size === 0 || !chainHolds(err, (m) => this.mask(m) !== m)) return err;
    return this.#copy(err) as E;
  }

  #copy(err: Error): Error {
    const copy = Object.create(Object.getPrototypeOf(err) as object) as Error;
    for (const key of Object.getOwnPropertyNames(err)) {
      if (key === 'stack' || key === 'cause' || key === 'message') continue;
      Object.defineProperty(copy, key, Object.getOwnPropertyDescriptor(err, key) as PropertyDescriptor);
    }
    Object.defineProperty(copy, 'message', {
      value: this.mask(err.message),
      writable: true,
      configurable: true,
    });
    Object.defineProperty(copy, 'stack', {
      value: `${err.name}: ${this.mask(err.message)}`,
      writable: true,
      configurable: true,
    });
    if (err.cause !== undefined) {
      const cause = err.cause instanceof Error ? this.#copy(err.cause) : this.mask(String(err.cause));
      Object.defineProperty(copy, 'cause', { value: cause, writable: true, configurable: true });
    }
    return copy;
  }
}

function chainHolds(err: unknown, test: (message: string) => boolean): boolean {
  for (let e = err, depth = 0; e !== undefined && depth < 16; depth++) {
    if (e instanceof Error) {
      if (test(e.message) || (typeof e.stack === 'string' && test(e.stack))) return true;
      e = e.cause;
    } else {
      return test(String(e));
    }
  }
  return false;
}
