import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Directory of the fixture MCP servers (`test/fixtures/servers`). */
export const FIXTURE_SERVERS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../fixtures/servers');

/** Names of the fixture servers, for `fixture()` and `nodeFixture()`. */
export type FixtureName =
  | 'echo'
  | 'modern'
  | 'paged'
  | 'weird-names'
  | 'exit-at-start'
  | 'hang-initialize'
  | 'no-tools'
  | 'faulty'
  | 'faulty-http'
  | 'hostile-schemas'
  | 'hostile-requests'
  | 'hostile-answers'
  | 'tool-defs'
  | 'tasks-modern'
  | 'tasks-legacy'
  | 'routing'
  | 'divergent-answers'
  | 'mail'
  | 'skills';

/** Absolute path of a fixture server; `name` may carry the `.mjs` suffix or not. */
export function fixture(name: FixtureName | `${FixtureName}.mjs`): string {
  const file = join(FIXTURE_SERVERS_DIR, name.endsWith('.mjs') ? name : `${name}.mjs`);
  if (!existsSync(file)) throw new Error(`No fixture server at ${file}`);
  return file;
}

/** `{ command, args }` that runs a fixture with this Node binary: drop it into a stdio server config. */
export function nodeFixture(
  name: FixtureName | `${FixtureName}.mjs`,
  args: readonly string[] = [],
): { command: string; args: string[] } {
  return { command: process.execPath, args: [fixture(name), ...args] };
}

/** The tool names `weird-names.mjs` lists, in order. The self-test checks the two stay equal. */
export const WEIRD_TOOL_NAMES: readonly string[] = Object.freeze([
  'read.file',
  'read_file',
  'read-file',
  'a:b',
  'star*',
  'has space',
  '',
  'tab\there',
  'zero\u200bwidth',
  'ünïcödé',
  `hundred_${'c'.repeat(92)}`,
  `${'very_long_tool_name_that_keeps_going_'.padEnd(72, 'x')}_alpha`,
  `${'very_long_tool_name_that_keeps_going_'.padEnd(72, 'x')}_beta`,
  'CamelCase',
]);

/** Built-in tool names of `echo.mjs` (before any FIXTURE_TOOL_PREFIX), in listing order. */
export const ECHO_TOOL_NAMES: readonly string[] = Object.freeze([
  'echo',
  'add',
  'fail',
  'throw',
  'image',
  'mixed',
  'structured_only',
  'slow',
  'get_env',
  'progress',
  'pid',
  'request_meta',
  'add_tool',
  'set_description',
  'remove_tool',
]);

/** One line a fixture wrote to its FIXTURE_LOG file. */
export interface FixtureLogEntry {
  /** Process id of the fixture that wrote it (tells restarts apart). */
  pid: number;
  /** `request` / `notification`: a message received; `event`: something the fixture did (e.g. `aborted`). */
  kind: 'request' | 'notification' | 'event' | 'garbage';
  method?: string;
  /** JSON-RPC id of a request. */
  id?: string | number;
  /** For `tools/call`: the tool name and arguments. */
  tool?: string;
  args?: unknown;
  /** For other messages: their params. */
  params?: unknown;
  /** For `event` entries, e.g. `aborted` when `slow` saw its request cancelled. */
  event?: string;
  /** For `garbage` entries (hang-initialize only): the line that was not JSON. */
  line?: string;
}

/** Parses a FIXTURE_LOG file; a missing file means the fixture received nothing, so `[]`. */
export function readFixtureLog(path: string): FixtureLogEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as FixtureLogEntry);
}

/** A fresh FIXTURE_LOG path in its own temp dir; disposing it removes the dir. */
export interface FixtureLog extends AsyncDisposable {
  readonly path: string;
  /** `{ FIXTURE_LOG: path }`, to spread into a server's env. */
  readonly env: { FIXTURE_LOG: string };
  /** Everything logged so far. */
  entries(): FixtureLogEntry[];
  /** Logged `tools/call` requests, optionally only those for `tool`. */
  toolCalls(tool?: string): FixtureLogEntry[];
  close(): Promise<void>;
}

/** Creates a temp log file location for fixtures (`await using log = createFixtureLog()`). */
export function createFixtureLog(): FixtureLog {
  const dir = mkdtempSync(join(tmpdir(), 'interlock-fixture-log-'));
  const path = join(dir, 'requests.jsonl');
  const close = async () => rmSync(dir, { recursive: true, force: true });
  return {
    path,
    env: { FIXTURE_LOG: path },
    entries: () => readFixtureLog(path),
    toolCalls: (tool) =>
      readFixtureLog(path).filter(
        (e) => e.method === 'tools/call' && (tool === undefined || e.tool === tool),
      ),
    close,
    [Symbol.asyncDispose]: close,
  };
}
