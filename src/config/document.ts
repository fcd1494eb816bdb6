/**
 * Reading one config file (the project file, a referenced `mcp.json` or policy file) into plain data, with a
 * way back from a field path to its line and column for YAML files. Parse errors are `ConfigError`s naming
 * the file and the position.
 */
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import { ConfigError } from '../errors.js';
import type { FileIssue } from './file-issues.js';
import { stripJsonComments } from './mcp-json.js';

/** One step of a field path: an object key or an array index. */
export type PathSegment = string | number;

/** A 1-based position in a file. */
export interface FilePosition {
  line: number;
  column: number;
}

/** A parsed config file. */
export interface ConfigDocument {
  /** The file as messages name it (relative to the working directory when inside it). */
  readonly file: string;
  /** The path it was read from. */
  readonly path: string;
  /** The file's data, as JSON-compatible values. */
  readonly data: unknown;
  /** Where the value at `path` (or its nearest existing parent) starts; `undefined` for JSON files. */
  /** Where `path` is written: its value, or with `key` the field's key (an unknown field is placed at its name). */
  locate(path: readonly PathSegment[], options?: { key?: boolean }): FilePosition | undefined;
}

/** Most YAML aliases expanded in one file: a guard against "billion laughs" documents. */
const MAX_YAML_ALIASES = 100;

/** True for `.json` files (JSON with comments, as VS Code writes); everything else is read as YAML. */
export function isJsonFile(file: string): boolean {
  return extname(file).toLowerCase() === '.json';
}

/**
 * Reads and parses `path` (YAML, or JSON with comments for `.json`). `what` and `file` (default: `path`) name it
 * in errors.
 */
export async function readConfigDocument(path: string, what: string, file = path): Promise<ConfigDocument> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'the file does not exist' : (err as Error).message;
    throw new ConfigError(`Cannot read ${what} ${file}: ${reason}.`, {
      file,
      cause: err,
      issues: [{ path: '(file)', message: reason }],
    });
  }
  return isJsonFile(path) ? parseJson(text, path, file, what) : parseYaml(text, path, file, what);
}

function parseJson(text: string, path: string, file: string, what: string): ConfigDocument {
  let data: unknown;
  try {
    data = JSON.parse(stripJsonComments(text));
  } catch (err) {
    const message = `not valid JSON: ${(err as Error).message}`;
    throw new ConfigError(`Invalid ${what} ${file}: ${message}.`, {
      file,
      cause: err,
      issues: [{ path: '(file)', message }],
    });
  }
  return { file, path, data, locate: () => undefined };
}

function parseYaml(text: string, path: string, file: string, what: string): ConfigDocument {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const first = doc.errors[0];
  if (first !== undefined) {
    const pos = lineCounter.linePos(first.pos[0]);
    const message = `not valid YAML: ${first.message.split('\n')[0]}`;
    const issue: FileIssue = { path: '(file)', message, line: pos.line, column: pos.col };
    throw new ConfigError(`Invalid ${what} ${file}:${pos.line}:${pos.col}: ${message}.`, {
      file,
      cause: first,
      issues: [issue],
    });
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (err) {
    const message = `not usable YAML: ${(err as Error).message}`;
    throw new ConfigError(`Invalid ${what} ${file}: ${message}.`, {
      file,
      cause: err,
      issues: [{ path: '(file)', message }],
    });
  }
  // `polcy:` followed by a block: its value starts a line below the key the message is about (issue 39).
  const keyNode = (at: readonly PathSegment[]): unknown => {
    const parent = at.length === 1 ? doc.contents : doc.getIn(at.slice(0, -1), true);
    if (!isMap(parent)) return undefined;
    return parent.items.find((pair) => isScalar(pair.key) && pair.key.value === at[at.length - 1])?.key;
  };
  const locate = (at: readonly PathSegment[], options: { key?: boolean } = {}): FilePosition | undefined => {
    for (let n = at.length; n >= 0; n--) {
      const key = options.key === true && n === at.length && n > 0 ? keyNode(at) : undefined;
      const node = n === 0 ? doc.contents : (key ?? doc.getIn(at.slice(0, n), true));
      const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
      if (range !== undefined) {
        const pos = lineCounter.linePos(range[0]);
        return { line: pos.line, column: pos.col };
      }
    }
    return undefined;
  };
  return { file, path, data, locate };
}
