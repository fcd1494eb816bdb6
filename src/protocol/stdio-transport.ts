/**
 * A stdio transport that owns its server process for real: the server runs in its own process group, closing
 * it ends the whole group (stdin end, then SIGTERM, then SIGKILL after a grace period), stdout is read as
 * JSON lines without quadratic buffering, a bad line is reported and skipped, an enormous line fails the
 * server with a clear error, and every live group is killed when this process exits.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import {
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  parseJSONRPCMessage,
  SdkError,
  SdkErrorCode,
  SERVER_INFO_META_KEY,
  STDIO_DEFAULT_MAX_BUFFER_SIZE,
  type Transport,
} from '@modelcontextprotocol/client';
import { ConnectionLostError, type InterlockErrorOptions } from '../errors.js';
import { isJsonObject } from '../json.js';
import { MASK_LOOKAHEAD_CHARS, maskThenCut } from '../redact.js';
import { plainServerInfo } from './results.js';

/** How long a server gets after stdin ends, and again after SIGTERM. @default 2 000 ms */
export const DEFAULT_KILL_GRACE_MS = 2_000;
/** What `send` returns when the message was handed to the pipe: one settled promise for every such send. */
const SENT: Promise<void> = Promise.resolve();
/**
 * The largest message (one stdout line) accepted from a server: the SDK's own stdio limit,
 * `STDIO_DEFAULT_MAX_BUFFER_SIZE` (10 MiB). A server config's `maxMessageBytes` changes it. @default 10 MiB
 */
export const DEFAULT_MAX_MESSAGE_BYTES: number = STDIO_DEFAULT_MAX_BUFFER_SIZE;
/**
 * How long a server that wrote a non-JSON line to stdout before any JSON-RPC message gets to send one, before it
 * is taken for something that does not speak MCP on stdio and closed. @default 3 000 ms
 */
export const DEFAULT_STDOUT_NOISE_GRACE_MS = 3_000;
/** Longest part of a server's stdout line quoted in a message. */
const MAX_QUOTED_LINE = 200;

type Utf8Slicer = { utf8Slice(start: number, end: number): string };

/**
 * Bytes `start` to `end` of a chunk decoded as UTF-8, by the decoder `toString('utf8', start, end)` ends in, without
 * toString's clamping of its arguments, which the reader's indices never need. With calls one at a time every chunk
 * holds one answer and `start` is always 0, so V8 optimized toString without its other branch and deoptimized the
 * reader as soon as calls in flight brought several lines per chunk (docs/performance.md, eleventh pass). Chosen
 * once: `toString` only where a runtime's Buffer has no `utf8Slice`.
 */
const decodeUtf8: (chunk: Buffer, start: number, end: number) => string =
  typeof (Buffer.prototype as Partial<Utf8Slicer>).utf8Slice === 'function'
    ? (chunk, start, end) => (chunk as Buffer & Utf8Slicer).utf8Slice(start, end)
    : (chunk, start, end) => chunk.toString('utf8', start, end);

/**
 * A server wrote something other than JSON-RPC to stdout before its first message, and no message followed
 * within the grace period: it is not speaking MCP on stdio (started in HTTP mode, a wrong command, a banner
 * printed on stdout by a server that then waits for something else). Ends the connect at once instead of
 * waiting out `connectTimeoutMs` (issue 18, item 6).
 */
export class StdoutNoiseError extends Error {
  /** The first offending line, masked (when the transport has a mask) and then cut to 200 characters. */
  readonly line: string;

  constructor(line: string, graceMs: number) {
    super(
      `it wrote a line to stdout that is not an MCP message, and no MCP message followed within ${graceMs} ms: ${JSON.stringify(line)}. ` +
        'A stdio server must write only JSON-RPC messages to stdout: check that the command and its arguments start it in stdio mode, and that it logs to stderr',
    );
    this.name = new.target.name;
    this.line = line;
  }
}

/**
 * A server wrote a message (one stdout line) larger than the connection's limit: the transport closed it. Code
 * `CONNECTION_LOST`; `limit` is the limit in bytes, and `operatorHint` says how to raise it.
 */
export class MessageTooLargeError extends ConnectionLostError {
  readonly limit: number;
  readonly operatorHint: string;

  constructor(limit: number, options: InterlockErrorOptions = {}) {
    const who = options.server === undefined ? 'the server' : `server '${options.server}'`;
    super(
      `The connection to ${who} was closed: it wrote a message larger than the limit of ${limit} bytes (maxMessageBytes)`,
      options,
    );
    this.limit = limit;
    this.operatorHint = `If the server's messages are meant to be this large, raise maxMessageBytes in its config (now ${limit}; the default, ${DEFAULT_MAX_MESSAGE_BYTES}, is the MCP SDK's).`;
  }
}

/** The longest stderr line passed on; the rest of a longer line is dropped. */
export const MAX_STDERR_LINE_CHARS = 16_384;

/** Options of {@link ProcessStdioTransport}. */
export interface ProcessStdioOptions {
  command: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd?: string | undefined;
  /**
   * Each stderr line of the server, masked and then cut to {@link MAX_STDERR_LINE_CHARS} characters (a line that
   * goes on longer is cut once it is {@link MASK_LOOKAHEAD_CHARS} past the cut, and its rest dropped).
   */
  onStderr?: ((line: string) => void) | undefined;
  /**
   * Masks known secrets in what the transport quotes or passes on (stderr lines, a stdout line that is not
   * JSON-RPC), before it is cut. @default none
   */
  mask?: ((text: string) => string) | undefined;
  /** @default DEFAULT_KILL_GRACE_MS */
  killGraceMs?: number | undefined;
  /** The largest message (one stdout line) accepted; a larger one closes the server. @default DEFAULT_MAX_MESSAGE_BYTES */
  maxMessageBytes?: number | undefined;
  /**
   * After a non-JSON stdout line that comes before any JSON-RPC message, how long to wait for one before closing
   * the server with a {@link StdoutNoiseError}. Later lines are only reported (`onerror`) and skipped.
   * @default DEFAULT_STDOUT_NOISE_GRACE_MS
   */
  stdoutNoiseGraceMs?: number | undefined;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Kills every live server group when this process exits, also on SIGINT/SIGTERM (signal-exit re-raises). */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Loaded with the first server started, not at import (issue 15, import time).
  const { onExit } = createRequire(import.meta.url)('signal-exit') as typeof import('signal-exit');
  onExit(() => {
    for (const child of live) killGroup(child, 'SIGKILL', true);
  });
}

/** Signals the child's whole process group; `force` also when the leader already exited (orphans remain). */
function killGroup(child: ChildProcess, signal: NodeJS.Signals, force = false): void {
  if (child.pid === undefined) return;
  if (!force && (child.exitCode !== null || child.signalCode !== null)) return;
  try {
    if (process.platform === 'win32') child.kill(signal);
    else process.kill(-child.pid, signal);
  } catch {
    // The group is already gone: nothing to do. A lone child may remain if setsid failed; kill it directly.
    try {
      child.kill(signal);
    } catch {}
  }
}

/** Speaks MCP over a child process's stdin and stdout. Implements the SDK's `Transport`. */
export class ProcessStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #options: ProcessStdioOptions;
  #child: ChildProcess | undefined;
  #closed = false;
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  #chunks: Buffer[] = [];
  #pendingBytes = 0;
  #stderrPending = '';
  /** The current stderr line was cut: what comes until its end is dropped. */
  #stderrCut = false;
  #closing: Promise<void> | undefined;
  /** A JSON-RPC message has arrived: from then on a bad line is only skipped. */
  #spoken = false;
  #noiseTimer: NodeJS.Timeout | undefined;
  #noise: StdoutNoiseError | undefined;
  #tooLarge: MessageTooLargeError | undefined;
  /** Lines held back to be written together (see {@link send}); undefined when none are being held. */
  #held: string | undefined;
  /** The last chunk from stdout held more than one message (see {@link send}). */
  #answersTogether = false;

  constructor(options: ProcessStdioOptions) {
    this.#options = options;
  }

  /** The server's process id while it runs. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /**
   * Always null: stderr is read line by line into `onStderr`. Present so the SDK recognises this as a stdio
   * transport when it negotiates the protocol era (a silent probe then means a 2025-era server, not an outage).
   */
  get stderr(): null {
    return null;
  }

  /** How the process ended, once it has. */
  get exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.#exit;
  }

  /** Why the transport closed the server itself: it wrote to stdout what is not MCP (see {@link StdoutNoiseError}). */
  get stdoutNoise(): StdoutNoiseError | undefined {
    return this.#noise;
  }

  /** Why the transport closed the server itself: it wrote a message over the limit (see {@link MessageTooLargeError}). */
  get tooLarge(): MessageTooLargeError | undefined {
    return this.#tooLarge;
  }

  /** "exited with code 1" / "was killed by SIGKILL", for messages. */
  describeExit(): string | undefined {
    if (this.#exit === undefined) return undefined;
    return this.#exit.signal !== null
      ? `was killed by ${this.#exit.signal}`
      : `exited with code ${this.#exit.code ?? 'unknown'}`;
  }

  start(): Promise<void> {
    if (this.#child !== undefined) throw new Error('ProcessStdioTransport already started');
    installExitHook();
    return new Promise((resolve, reject) => {
      const child = spawn(this.#options.command, [...this.#options.args], {
        env: this.#options.env,
        cwd: this.#options.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        // Its own process group, so closing it reaches grandchildren too (npx -> sh -> node).
        detached: process.platform !== 'win32',
        windowsHide: true,
        shell: false,
      });
      this.#child = child;
      child.once('error', (error) => {
        live.delete(child);
        reject(error);
        this.onerror?.(error);
      });
      child.once('spawn', () => {
        live.add(child);
        resolve();
      });
      child.once('exit', (code, signal) => {
        this.#exit = { code, signal };
      });
      child.once('close', () => {
        live.delete(child);
        this.#closed = true;
        this.onclose?.();
      });
      child.stdout?.on('data', (chunk: Buffer) => this.#onStdout(chunk));
      child.stderr?.on('data', (chunk: Buffer) => this.#onStderr(chunk));
      // EPIPE when the server died: the close path reports it; don't crash the client.
      child.stdin?.on('error', (error) => this.onerror?.(error));
    });
  }

  #onStdout(chunk: Buffer): void {
    let start = 0;
    let nl = chunk.indexOf(10, start);
    this.#answersTogether = nl !== -1 && chunk.indexOf(10, nl + 1) !== -1;
    while (nl !== -1) {
      // The common case, a line whole in this chunk, is decoded in place: no Buffer view, no copy.
      let line: string;
      if (this.#chunks.length === 0) line = decodeUtf8(chunk, start, nl);
      else {
        line = Buffer.concat([...this.#chunks, chunk.subarray(start, nl)]).toString('utf8');
        this.#chunks = [];
        this.#pendingBytes = 0;
      }
      this.#onLine(line);
      if (this.#closed) return;
      start = nl + 1;
      nl = chunk.indexOf(10, start);
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.#chunks.push(rest);
      this.#pendingBytes += rest.length;
      const max = this.#options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
      if (this.#pendingBytes > max) {
        this.#chunks = [];
        this.#pendingBytes = 0;
        this.#tooLarge = new MessageTooLargeError(max);
        this.onerror?.(this.#tooLarge);
        void this.close();
      }
    }
  }

  #onLine(line: string): void {
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    // A JSON-RPC line starts with '{'; only a line that does not is looked at for being blank.
    if (text.charCodeAt(0) !== 123 && text.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      const value: unknown = JSON.parse(text);
      // Most lines answer a request. The plain shape of an answer is recognized without a schema walk (see
      // isPlainResultResponse); anything else is checked against the result-response schema alone, not the
      // four-way union that tries request and notification first and builds their failures.
      // An answer whose `_meta` carries a server info the SDK's schema would rewrite (or drop, when malformed) takes
      // the schema's output, as the SDK's own stdio transport does (issue 43).
      message =
        isPlainResultResponse(value) || (isJSONRPCResultResponse(value) && !carriesServerInfo(value))
          ? value
          : parseJSONRPCMessage(value);
    } catch {
      // Servers that log to stdout corrupt nothing here: the line is reported and skipped. Before the first
      // message it may also mean the process does not speak MCP at all: it gets a grace period to show it does.
      const shown = maskThenCut(text, this.#options.mask, MAX_QUOTED_LINE);
      if (!this.#spoken) this.#armNoiseTimer(shown);
      this.onerror?.(
        new Error(`skipped a stdout line that is not a JSON-RPC message: ${JSON.stringify(shown)}`),
      );
      return;
    }
    if (!this.#spoken) {
      this.#spoken = true;
      clearTimeout(this.#noiseTimer);
    }
    this.onmessage?.(message);
  }

  #armNoiseTimer(line: string): void {
    if (this.#noiseTimer !== undefined) return;
    const graceMs = this.#options.stdoutNoiseGraceMs ?? DEFAULT_STDOUT_NOISE_GRACE_MS;
    this.#noiseTimer = setTimeout(() => {
      if (this.#spoken || this.#closed || this.#child === undefined) return;
      this.#noise = new StdoutNoiseError(line, graceMs);
      this.onerror?.(this.#noise);
      // It is not listening for MCP: no point in ending stdin and waiting; SIGTERM now, SIGKILL after the grace.
      killGroup(this.#child, 'SIGTERM');
      void this.close();
    }, graceMs);
    this.#noiseTimer.unref();
  }

  #onStderr(chunk: Buffer): void {
    const onLine = this.#options.onStderr;
    if (onLine === undefined) return;
    this.#stderrPending += chunk.toString('utf8');
    const cut = (line: string) =>
      maskThenCut(line, this.#options.mask, MAX_STDERR_LINE_CHARS, (n) => `… [${n} more characters cut]`);
    let nl = this.#stderrPending.indexOf('\n');
    while (nl !== -1) {
      const line = this.#stderrPending.slice(0, nl).replace(/\r$/, '');
      // The end of a line already cut closes it; the line itself was passed on.
      if (this.#stderrCut) this.#stderrCut = false;
      else if (line !== '') onLine(cut(line));
      this.#stderrPending = this.#stderrPending.slice(nl + 1);
      nl = this.#stderrPending.indexOf('\n');
    }
    if (this.#stderrCut) this.#stderrPending = '';
    else if (this.#stderrPending.length > MAX_STDERR_LINE_CHARS + MASK_LOOKAHEAD_CHARS) {
      // A line with no end in sight: cut it, masked first with what follows the cut (issue 38).
      onLine(cut(this.#stderrPending));
      this.#stderrPending = '';
      this.#stderrCut = true;
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (stdin === undefined || stdin === null || this.#closed || stdin.destroyed || !stdin.writable) {
      // The SDK's own code for a transport that cannot send: the call path then knows the request never left.
      return Promise.reject(
        new SdkError(SdkErrorCode.NotConnected, 'Not connected: the server process is not running'),
      );
    }
    const line = `${JSON.stringify(message)}\n`;
    // Answers that arrive together (calls in flight) each let the caller send the next request. The first of
    // those is written at once; the rest are joined and written in one system call, rather than one system call
    // each, by a promise reaction queued behind them: the answers' calls go through the same steps to reach send,
    // so the others are held by the time it runs (one that takes longer is written on its own, nothing waits).
    // Not process.nextTick: a callback that only calls in flight put into Node's tick loop made V8 re-optimize
    // that loop whenever calls started to overlap (docs/performance.md, tenth pass). A lone answer, a call at a
    // time, changes nothing: every message is written at once, as the SDK's transport does.
    // No callback per write: a write error reaches onerror through stdin's 'error' listener (and the close path).
    if (this.#held !== undefined) {
      this.#held += line;
      return SENT;
    }
    if (this.#answersTogether && !stdin.writableNeedDrain) {
      this.#answersTogether = false;
      this.#held = '';
      SENT.then(this.#release);
    }
    if (stdin.write(line)) return SENT;
    // Backpressure: the message is queued; the caller waits until the pipe drains, or learns that it closed.
    return new Promise((resolve, reject) => {
      const settle = (error?: Error) => {
        stdin.off('drain', onDrain);
        stdin.off('close', onClose);
        stdin.off('error', settle);
        if (error === undefined) resolve();
        else reject(error);
      };
      const onDrain = () => settle();
      const onClose = () =>
        settle(
          new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed: the server process stdin closed'),
        );
      stdin.once('drain', onDrain);
      stdin.once('close', onClose);
      stdin.once('error', settle);
    });
  }

  /** Writes the lines held back (see {@link send}). */
  #release = (): void => {
    const held = this.#held;
    this.#held = undefined;
    if (held === undefined || held === '') return;
    const stdin = this.#child?.stdin;
    // The pipe closed meanwhile: so did the connection, whose close path settles the calls these lines carried.
    if (stdin === undefined || stdin === null || stdin.destroyed || !stdin.writable) return;
    stdin.write(held);
  };

  /** Ends stdin, then SIGTERM to the group, then SIGKILL; resolves once the process is gone. Safe twice. */
  close(): Promise<void> {
    // One shutdown however often close() is called: each call would otherwise add listeners to the process.
    if (this.#child === undefined) return Promise.resolve();
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    clearTimeout(this.#noiseTimer);
    const child = this.#child;
    if (child === undefined) return;
    const grace = this.#options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    const gone = new Promise<void>((resolve) => {
      if (this.#closed) resolve();
      else child.once('close', () => resolve());
    });
    if (!this.#closed) {
      // Lines held back in this turn go out before stdin ends.
      this.#release();
      try {
        child.stdin?.end();
      } catch {}
      if (!(await settlesWithin(gone, grace))) {
        killGroup(child, 'SIGTERM');
        if (!(await settlesWithin(gone, grace))) {
          killGroup(child, 'SIGKILL');
          await settlesWithin(gone, grace);
        }
      }
    }
    // The leader may have exited on stdin end while a grandchild still runs in the group: end the group too.
    killGroup(child, 'SIGKILL', true);
    live.delete(child);
  }
}

function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    promise.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * The common answer, `{"jsonrpc":"2.0","id":7,"result":{…}}`, recognized by its shape: exactly those three keys, the
 * version, a string or integer id, and a result that is a JSON object whose `_meta`, if it has one, is a JSON object
 * too. That is all the SDK's `JSONRPCResultResponseSchema` checks of such a message (a strict object whose result is
 * a loose object with an optional `_meta`, itself a loose object whose one typed key, the server's info, falls back
 * to undefined when it does not fit; a server info is accepted here only when the schema returns it as it is), so
 * whatever this accepts the schema accepts, and returns unchanged, too (a property test holds it to
 * that). Every other message goes through the schema. The result's own fields are checked afterwards against the
 * method's result schema by the client, as for every answer. Per answer this saves a zod walk that cost more than
 * checking the tool result itself (docs/performance.md); a 2026-07-28 server built on the v2 SDK puts its name in
 * every result's `_meta`, so without the `_meta` case none of its answers would be spared it.
 * @internal
 */
export function isPlainResultResponse(value: unknown): value is JSONRPCMessage {
  if (typeof value !== 'object' || value === null) return false;
  const message = value as { jsonrpc?: unknown; id?: unknown; result?: unknown };
  if (message.jsonrpc !== '2.0') return false;
  const id = message.id;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return false;
  const result = message.result;
  if (!isJsonObject(result)) return false;
  if (Object.hasOwn(result, '_meta')) {
    const meta = result._meta;
    if (!isJsonObject(meta)) return false;
    // The schema rewrites a server info (keeps its known fields, drops a malformed one): only a plain one is as sent.
    if (
      Object.hasOwn(meta, SERVER_INFO_META_KEY) &&
      plainServerInfo(meta[SERVER_INFO_META_KEY]) === undefined
    )
      return false;
  }
  let keys = 0;
  for (const key in message) {
    if (!Object.hasOwn(message, key)) return false;
    keys++;
  }
  return keys === 3;
}

/** Whether an answer's result `_meta` carries a server info (which the SDK's schema may rewrite). */
function carriesServerInfo(value: unknown): boolean {
  const meta = (value as { result?: { _meta?: unknown } }).result?._meta;
  return isJsonObject(meta) && Object.hasOwn(meta, SERVER_INFO_META_KEY);
}
