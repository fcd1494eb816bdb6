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
      if (found.length >= MIN_SECRET_LENGTH) out.add(found);
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
  const password = decodeURIComponent(new URL(text).password);
  if (password.length >= MIN_SECRET_LENGTH) out.add(password);
}
