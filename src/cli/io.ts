/**
 * Where the CLI reads and writes, passed in so `main()` runs in-process in tests, and the printer on top of
 * it: colors only on a TTY and never with `NO_COLOR`, secrets masked in everything written, control
 * characters from servers made visible on a terminal, and one JSON document per command with `--json`.
 */

/** A stream the CLI writes to. `process.stdout` and `process.stderr` fit. */
export interface CliStream {
  write(chunk: string): unknown;
  readonly isTTY?: boolean | undefined;
  readonly columns?: number | undefined;
}

/** A stream the CLI may read (`--args-file -`, approval prompts). */
export type CliInput = NodeJS.ReadableStream & { readonly isTTY?: boolean | undefined };

/** The CLI's surroundings. */
export interface CliIO {
  stdout: CliStream;
  stderr: CliStream;
  stdin?: CliInput | undefined;
  /** Variables for `${VAR}` expansion and `NO_COLOR`. */
  env: Readonly<Record<string, string | undefined>>;
  /** Where the project file is looked for. */
  cwd: string;
  /** Aborted on Ctrl-C: the command closes what it opened and exits 130. */
  signal?: AbortSignal | undefined;
}

/** The real process's streams, environment and working directory. */
export function processIO(signal?: AbortSignal): CliIO {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    // Lazy: touching process.stdin opens it, which only `--args-file -` and approval prompts need.
    get stdin() {
      return process.stdin;
    },
    env: process.env,
    cwd: process.cwd(),
    signal,
  };
}

/** The styles the CLI uses. */
export type Style = 'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'cyan';

const ANSI: Record<Style, [number, number]> = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
};

/** True when colors may be written to `stream`: a TTY, `NO_COLOR` unset or empty, `TERM` not `dumb`. */
export function colorAllowed(stream: CliStream, env: CliIO['env'], disabled = false): boolean {
  if (disabled || stream.isTTY !== true) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return env.TERM !== 'dumb';
}

// C0 and C1 control characters other than tab and newline: a server's text must not drive the terminal.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Replaces control characters (escape sequences included) with visible `\xNN` text. */
export function visible(text: string): string {
  return text.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** Options of a {@link Printer}. */
export interface PrinterOptions {
  json: boolean;
  /** `--no-color`. */
  noColor?: boolean | undefined;
}

/** Writes the CLI's output. Every write passes the secret mask. */
export class Printer {
  readonly json: boolean;
  readonly #io: CliIO;
  readonly #color: { out: boolean; err: boolean };
  #mask: (text: string) => string = (text) => text;

  constructor(io: CliIO, options: PrinterOptions) {
    this.#io = io;
    this.json = options.json;
    this.#color = {
      out: colorAllowed(io.stdout, io.env, options.noColor),
      err: colorAllowed(io.stderr, io.env, options.noColor),
    };
  }

  /** Masks these values in everything written from now on. */
  setMask(mask: (text: string) => string): void {
    this.#mask = mask;
  }

  /** Masks secrets in `text` (for values put into JSON before it is written). */
  mask(text: string): string {
    return this.#mask(text);
  }

  get stdoutIsTTY(): boolean {
    return this.#io.stdout.isTTY === true;
  }
  get stderrIsTTY(): boolean {
    return this.#io.stderr.isTTY === true;
  }
  /** Width of the terminal on stdout, or `undefined` when it is not a terminal. */
  get columns(): number | undefined {
    return this.#io.stdout.isTTY === true ? this.#io.stdout.columns : undefined;
  }

  /** `text` in `style`, when colors are on for that stream. */
  style(style: Style, text: string, stream: 'out' | 'err' = 'out'): string {
    if (!this.#color[stream]) return text;
    const [on, off] = ANSI[style];
    return `\u001b[${on}m${text}\u001b[${off}m`;
  }

  /** Writes raw text to stdout (masked). */
  write(text: string): void {
    this.#io.stdout.write(this.#mask(text));
  }
  /** Writes one line to stdout. */
  line(text = ''): void {
    this.write(`${text}\n`);
  }
  /** Writes raw text to stderr (masked). */
  writeErr(text: string): void {
    this.#io.stderr.write(this.#mask(text));
  }
  /** Writes one line to stderr. */
  lineErr(text = ''): void {
    this.writeErr(`${text}\n`);
  }
  /** A warning on stderr (also with `--json`, whose stdout stays one JSON document). */
  warn(message: string): void {
    this.lineErr(`${this.style('yellow', 'warning:', 'err')} ${visible(message)}`);
  }
  /** The command's JSON document on stdout. */
  data(value: unknown): void {
    this.write(`${JSON.stringify(value, null, 2)}\n`);
  }
}
