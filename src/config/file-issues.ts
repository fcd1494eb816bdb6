/**
 * Turning validation issues into messages a person can act on: the file, the path of the field, its line
 * (YAML), what was expected and what was found. Found values come from the file as written, before
 * `${VAR}` expansion, and never from `env` or `headers`, so a secret cannot reach a message.
 */
import { distance } from 'fastest-levenshtein';
import { ConfigError, type ConfigIssue } from '../errors.js';
import { SECRET_NAME } from '../redact.js';
import { parsePath } from '../zod-issues.js';
import type { ConfigDocument, PathSegment } from './document.js';

/** A config issue with its place in the file. */
export interface FileIssue extends ConfigIssue {
  /** The file the issue is in, when it is not the project file (an `mcpConfig` or `policy.file`). */
  file?: string | undefined;
  /** 1-based line of the field (or its nearest parent) in a YAML file. */
  line?: number | undefined;
  column?: number | undefined;
}

/** The value at `path` in `data`; `found: false` when some step is missing. */
export function valueAt(data: unknown, path: readonly PathSegment[]): { found: boolean; value: unknown } {
  let value = data;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) {
      return { found: false, value: undefined };
    }
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return { found: true, value };
}

/** True when the value at `path` may hold a secret: an `env` or `headers` value, or a key named like one. */
export function isSensitivePath(path: readonly PathSegment[]): boolean {
  const last = path[path.length - 1];
  if (typeof last === 'string' && SECRET_NAME.test(last)) return true;
  for (let i = 0; i < path.length - 1; i++) {
    if (path[i] === 'env' || path[i] === 'headers') return true;
  }
  return false;
}

/** A short, secret-free description of a value as written in the file. */
export function describeValue(value: unknown, path: readonly PathSegment[]): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') {
    if (isSensitivePath(path)) return 'a string (not shown)';
    const shown = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    const note = value.includes('${') ? ' (before variable expansion)' : '';
    return `${JSON.stringify(shown)}${note}`;
  }
  if (Array.isArray(value)) return `a list of ${value.length} item${value.length === 1 ? '' : 's'}`;
  if (typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 0) return 'an empty object';
    const list = keys.slice(0, 6).join(', ');
    return `an object with ${keys.length > 6 ? `${list}, ...` : list}`;
  }
  return typeof value;
}

/** The closest of `known` to `key` (a small edit distance, or one starts with the other), if any. */
export function closestKey(key: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  const lower = key.toLowerCase();
  for (const candidate of known) {
    const c = candidate.toLowerCase();
    const score = c.startsWith(lower) || lower.startsWith(c) ? 1 : distance(lower, c);
    const limit = Math.max(2, Math.floor(Math.max(lower.length, c.length) / 3));
    if (score < bestScore && score <= limit) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}

/**
 * Rewrites an issue's message to say what was expected and what was found, adds a "did you mean" to unknown
 * fields (`knownKeys` gives the keys allowed at a path), and adds the line of the field.
 */
export function explainIssue(
  raw: ConfigIssue,
  doc: ConfigDocument,
  knownKeys: (path: readonly PathSegment[]) => readonly string[] | undefined,
): FileIssue {
  const issue = { ...raw, path: raw.path.replace(/\.\(root\)$/, '') };
  const path = parsePath(issue.path);
  const { found, value } = valueAt(doc.data, path);
  const shown = describeValue(found ? value : undefined, path);
  let message = issue.message;
  const unknown = /^unknown field\(s\) (.+)$/.exec(message);
  const invalidType = /^Invalid input: expected (.+), received (\w+)$/.exec(message);
  const invalidOption = /^Invalid option: expected (one of .+)$/.exec(message);
  let at = path;
  if (unknown !== null) {
    const names = [...(unknown[1] ?? '').matchAll(/'([^']*)'/g)].map((m) => m[1] ?? '');
    const known = knownKeys(path) ?? [];
    const hints = names.flatMap((name) => {
      const near = closestKey(name, known);
      return near === undefined ? [] : [names.length === 1 ? `'${near}'` : `'${near}' for '${name}'`];
    });
    const list = names.map((n) => `'${n}'`).join(', ');
    message = `unknown field${names.length === 1 ? '' : 's'} ${list}`;
    if (hints.length > 0) message += ` (did you mean ${hints.join(', ')}?)`;
    else if (known.length > 0) message += `; expected one of ${known.join(', ')}`;
    // Placed at the first unknown key (several are named in one message).
    at = [...path, names[0] as string];
  } else if (invalidType !== null) {
    message =
      invalidType[2] === 'undefined' && !found
        ? `required: expected ${invalidType[1]}, found nothing`
        : `expected ${invalidType[1]}, found ${shown}`;
  } else if (invalidOption !== null) {
    message = `expected ${invalidOption[1]}, found ${shown}`;
  } else if (
    !/environment variable|forbidden key|not supported|duplicate|server name|mcpConfig|has no server|found/.test(
      message,
    ) &&
    path.length > 0
  ) {
    message = `${message}; found ${shown}`;
  }
  const pos = doc.locate(at, { key: unknown !== null });
  return { path: issue.path, message, ...(pos === undefined ? {} : { line: pos.line, column: pos.column }) };
}

/** Formats one issue as `path (line 3, column 5): message` (a problem of the whole file: its position and message). */
export function formatIssue(issue: FileIssue): string {
  const where = issue.line === undefined ? '' : ` (line ${issue.line}, column ${issue.column ?? 1})`;
  if (issue.path === '(file)') return `${where === '' ? '' : `${where.slice(2, -1)}: `}${issue.message}`;
  return `${issue.path}${where}: ${issue.message}`;
}

/**
 * Drops issues that only follow from another one: anything else at a path whose variable is unset, and a
 * missing `transport` where `type` is wrong or neither `command` nor `url` was given.
 */
export function withoutConsequences(issues: readonly FileIssue[]): FileIssue[] {
  const unset = new Set(
    issues.filter((i) => i.message.startsWith('environment variable')).map((i) => i.path),
  );
  const causes = new Set(issues.map((i) => i.path));
  const seen = new Set<string>();
  return issues.filter((i) => {
    if (i.file !== undefined) {
      const key = `${i.file}\u0000${i.path}\u0000${i.message}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    }
    if (unset.has(i.path) && !i.message.startsWith('environment variable')) return false;
    if (i.path.endsWith('.transport') && !i.message.startsWith('expected')) {
      const server = i.path.slice(0, -'.transport'.length);
      if (causes.has(`${server}.type`) || causes.has(server)) return false;
    }
    const key = `${i.path}\u0000${i.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A `ConfigError` listing every issue of one file, one per line. */
export function fileError(
  what: string,
  file: string,
  issues: readonly FileIssue[],
  cause?: unknown,
): ConfigError {
  return filesError(file, new Map([[file, what]]), issues, cause);
}

/**
 * A `ConfigError` listing every issue at once: those of the project file and of the files it names (the
 * `mcpConfig` and the policy file; an issue's `file` says which). Issues of several files are grouped by file;
 * the error's `file` is the one file with problems, or the project file when there are several.
 *
 * @param kinds what each file is ("config file", "MCP config", "policy file"), by file as shown
 */
export function filesError(
  projectFile: string,
  kinds: ReadonlyMap<string, string>,
  issues: readonly FileIssue[],
  cause?: unknown,
): ConfigError {
  const byFile = new Map<string, FileIssue[]>();
  for (const issue of issues) {
    const file = issue.file ?? projectFile;
    byFile.set(file, [...(byFile.get(file) ?? []), issue]);
  }
  const count = issues.length === 1 ? '1 problem' : `${issues.length} problems`;
  const list = (items: readonly FileIssue[], indent: string) =>
    items.map((i) => `${indent}- ${formatIssue(i)}`).join('\n');
  const [only] = byFile.keys();
  if (byFile.size <= 1) {
    const file = only ?? projectFile;
    const what = kinds.get(file) ?? 'config file';
    return new ConfigError(`Invalid ${what} ${file} (${count}):\n${list(issues, '  ')}`, {
      file,
      issues,
      cause,
    });
  }
  const groups = [...byFile].map(
    ([file, items]) =>
      `  ${file}${file === projectFile ? '' : ` (${kinds.get(file) ?? 'file'})`}:\n${list(items, '    ')}`,
  );
  return new ConfigError(`Invalid configuration (${count} in ${byFile.size} files):\n${groups.join('\n')}`, {
    file: projectFile,
    issues,
    cause,
  });
}
