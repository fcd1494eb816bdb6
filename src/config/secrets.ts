/**
 * Secrets in server configs (issue 6: "Secrets expanded into env or headers never appear in output or logs"):
 * which values a printer must mask, and the masking itself.
 */

import { isJsonObject } from '../json.js';
import { MIN_SECRET_LENGTH, SECRET_NAME } from '../redact.js';
import { variableNames } from './env.js';

export { createMasker, MIN_SECRET_LENGTH } from '../redact.js';

/**
 * Adds to `out` the values one server entry (as written) may print: the value of every variable referenced
 * anywhere in it, URL passwords, and literal values of `env` and `headers` keys named like secrets.
 */
export function collectEntrySecrets(
  entry: unknown,
  env: Readonly<Record<string, string | undefined>>,
  out: Set<string>,
): void {
  if (!isJsonObject(entry)) return;
  // Every variable expanded anywhere in the entry (command, args, cwd, url, env, headers, auth, tls, proxy...):
  // its value may land in any output, such as a failed server's stderr tail echoing its arguments.
  collectSecretValues(entry, env, out);
  for (const field of ['env', 'headers']) {
    const map = entry[field];
    if (!isJsonObject(map)) continue;
    for (const [key, value] of Object.entries(map)) {
      if (typeof value !== 'string') continue;
      if (!value.includes('${') && SECRET_NAME.test(key) && value.length >= MIN_SECRET_LENGTH) {
        out.add(value);
        const credentials = /^\S+\s+(\S{6,})$/.exec(value)?.[1];
        if (credentials !== undefined) out.add(credentials);
      }
    }
  }
}

/**
 * Adds to `out` the value of every variable referenced anywhere in `value` (a config section such as `http`, or a
 * server's `auth`, `tls` and `proxy`), and the password of any URL with credentials written there.
 */
export function collectSecretValues(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  out: Set<string>,
): void {
  if (typeof value === 'string') {
    for (const name of variableNames(value)) {
      const found = env[name];
      if (found === undefined) continue;
      // A URL that is only scheme, host and port (plus credentials) is masked in its credentials alone, so that
      // messages can still say where (issue 39: `Cannot reach Redis at ***`). Any path, query or fragment may
      // carry a token: then the whole value is a secret.
      if (found.length >= MIN_SECRET_LENGTH && !bareUrl(found)) out.add(found);
      addUrlPassword(found, out);
    }
    addUrlPassword(value, out);
  } else if (Array.isArray(value)) {
    for (const v of value) collectSecretValues(v, env, out);
  } else if (isJsonObject(value)) {
    for (const v of Object.values(value)) collectSecretValues(v, env, out);
  }
}

function addUrlPassword(text: string, out: Set<string>): void {
  if (!URL.canParse(text)) return;
  const url = new URL(text);
  for (const part of [url.password, url.username]) {
    const decoded = decodeURIComponent(part);
    if (decoded.length >= MIN_SECRET_LENGTH) out.add(decoded);
    if (part !== decoded && part.length >= MIN_SECRET_LENGTH) out.add(part);
  }
}

/** True for `scheme://[user:password@]host[:port][/][/N]`: nothing but where, and credentials. */
function bareUrl(text: string): boolean {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text) || !URL.canParse(text)) return false;
  const url = new URL(text);
  return (
    url.host !== '' &&
    /^\/?\d*$/.test(url.pathname) &&
    url.search === '' &&
    url.hash === '' &&
    !text.includes('?') &&
    !text.includes('#')
  );
}
