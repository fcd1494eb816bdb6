/**
 * `${VAR}` expansion in config files (`mcp.json` and the project file): the one variable syntax of the package.
 */

import { z } from 'zod';
import type { ConfigIssue } from '../errors.js';
import { appendPath, parsePath } from '../zod-issues.js';

/** Options of {@link expandEnv} (and of `loadMCPConfig`). */
export interface ExpandEnvOptions {
  /** Variables for `${VAR}` expansion. @default process.env */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * A variable reference: `${VAR}`, `${env:VAR}` (VS Code) or `${VAR:-default}`; group 1 is the name, group 2 the
 * default. The one definition of the syntax: expansion and the secret collector both read it.
 */
const VAR_RE = /\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** The names of the variables `text` references, in order (repeats kept). */
export function variableNames(text: string): string[] {
  if (!text.includes('${')) return [];
  return [...text.matchAll(VAR_RE)].map((match) => match[1] as string);
}

/**
 * Expands `${VAR}`, `${env:VAR}` (VS Code) and `${VAR:-default}` in `value`. An unset variable without a
 * default is an issue naming the variable and `path`. The expanded value is never put into messages.
 */
export function expandString(
  value: string,
  path: string,
  env: Readonly<Record<string, string | undefined>>,
  issues: ConfigIssue[],
): string {
  if (!value.includes('${')) return value;
  const out = value.replace(VAR_RE, (_match, name: string, fallback: string | undefined) => {
    const found = Object.hasOwn(env, name) ? env[name] : undefined;
    if (found !== undefined && found !== '') return found;
    if (fallback !== undefined) return fallback;
    issues.push({
      path,
      message: `environment variable '${name}' is not set (set it, or write \${${name}:-default})`,
    });
    return '';
  });
  const input = /\$\{input:[^}]*\}/.exec(value);
  if (input !== null) {
    issues.push({ path, message: `VS Code input variables (${input[0]}) are not supported; use \${VAR}` });
  }
  return out;
}

/** Deep-copies `value`, expanding variables in every string and skipping prototype-polluting keys. */
export function expandEnv(
  value: unknown,
  options: ExpandEnvOptions = {},
  path = '',
  issues: ConfigIssue[] = [],
): unknown {
  const env = options.env ?? process.env;
  if (typeof value === 'string') return expandString(value, path === '' ? '(root)' : path, env, issues);
  if (Array.isArray(value)) return value.map((v, i) => expandEnv(v, options, appendPath(path, i), issues));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      if (key === '__proto__' || key === 'constructor' || key === 'prototype') {
        issues.push({ path: appendPath(path, key), message: 'forbidden key' });
        continue;
      }
      out[key] = expandEnv(v, options, appendPath(path, key), issues);
    }
    return out;
  }
  return value;
}

/** What {@link expanded} needs: the variables, and who keeps the values they put in. */
export interface ExpansionContext {
  /** Variables for `${VAR}` expansion. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Called with each value before expansion, to keep what it will put in as secrets (see `./secrets.ts`). */
  readonly collect?: ((value: unknown) => void) | undefined;
}

/**
 * `schema` behind `${VAR}` expansion (issue 15: the schema does the loading). An unset variable is an issue at its
 * field, and `schema` does not run then (the text would only be half expanded).
 */
export function expanded<S extends z.ZodType>(schema: S, ctx: ExpansionContext) {
  return z
    .unknown()
    .transform((value, zod) => {
      ctx.collect?.(value);
      const issues: ConfigIssue[] = [];
      const out = expandEnv(value, { env: ctx.env }, '', issues);
      for (const issue of issues)
        zod.addIssue({ code: 'custom', message: issue.message, path: parsePath(issue.path) });
      return out;
    })
    .pipe(schema);
}
