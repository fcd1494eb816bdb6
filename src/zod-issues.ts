/**
 * Zod issues as our {@link ConfigIssue}s (issue 15: one zod-to-error helper for every area): field paths written
 * one way everywhere (`servers[0].env`, `mcpServers["my.server"].url`), messages that never hold the bad value.
 */
import type { z } from 'zod';
import type { ConfigIssue } from './errors.js';

/** A key that reads unambiguously after a dot in a path; any other key is quoted (`mcpServers["my.server"]`). */
const PLAIN_KEY = /^[A-Za-z0-9_$-]+$/;

/** `path` followed by one key or index: `a.b`, `a[1]`, `a["my.server"]`. */
export function appendPath(path: string, key: PropertyKey): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  const name = String(key);
  if (!PLAIN_KEY.test(name)) return `${path}[${JSON.stringify(name)}]`;
  return path === '' ? name : `${path}.${name}`;
}

/** `path` followed by a path formatted by {@link formatPath} (`''` and `(root)` add nothing). */
export function joinPath(path: string, rest: string): string {
  if (rest === '' || rest === '(root)') return path;
  if (path === '') return rest;
  return rest.startsWith('[') ? `${path}${rest}` : `${path}.${rest}`;
}

/**
 * Formats a zod path like `args[1]` or `headers.Authorization`; a key that is not plain (a dot, a space) is
 * quoted: `mcpServers["my.server"].name`.
 */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) out = appendPath(out, key);
  return out;
}

/**
 * Splits `mcpServers.notes.args[1]` into `['mcpServers', 'notes', 'args', 1]` and `mcpServers["my.server"]` into
 * `['mcpServers', 'my.server']`; `(root)` is `[]`.
 */
export function parsePath(path: string): (string | number)[] {
  if (path === '(root)' || path === '(file)' || path === '') return [];
  const out: (string | number)[] = [];
  for (const match of path.matchAll(/\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|([^.[\]]+)/g)) {
    if (match[1] !== undefined) out.push(Number(match[1]));
    else if (match[2] !== undefined) out.push(JSON.parse(match[2]) as string);
    else out.push(match[3] as string);
  }
  return out;
}

/** Turns zod issues into ours, each path after `prefix` (`(root)` when both are empty). */
export function toConfigIssues(error: z.ZodError, prefix = ''): ConfigIssue[] {
  return error.issues.map((issue) => {
    const full = joinPath(prefix, formatPath(issue.path));
    const message =
      issue.code === 'unrecognized_keys'
        ? `unknown field(s) ${issue.keys.map((k) => `'${k}'`).join(', ')}`
        : issue.message;
    return { path: full === '' ? '(root)' : full, message };
  });
}

/** Issues as one line for an error message: `path: message; path: message`. */
export function describeIssues(issues: readonly ConfigIssue[]): string {
  return issues.map((i) => `${i.path}: ${i.message}`).join('; ');
}
