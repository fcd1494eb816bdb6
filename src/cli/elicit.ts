/**
 * The CLI's answers to a server's questions (elicitation, issue 13). On a terminal (stdin and stderr both TTYs,
 * no `--json`) it asks field by field on stderr, showing type, options and default; a URL-mode request shows the
 * full URL and its host (punycode flagged) and opens it only after a yes. Without a terminal there is nobody to
 * ask: it declines, and says so on stderr. The policy decides before any of this runs.
 */
import { createInterface } from 'node:readline';
import type { ElicitResult } from '@modelcontextprotocol/client';
import { type FormField, formFields } from '../interop/elicitation.js';
import type { ElicitationHandler, UrlElicitationHandler } from '../interop/server-requests.js';
import type { CliIO, Printer } from './io.js';
import { visible } from './io.js';

/** How many times a field is asked again after an answer that does not fit, before the form is cancelled. */
export const MAX_FIELD_ATTEMPTS = 3;

/** The handlers the CLI answers elicitations with. */
export interface CliElicitation {
  onElicitation: ElicitationHandler;
  onUrlElicitation: UrlElicitationHandler;
}

/** Reads lines one at a time; lines that arrive together are queued, not lost. */
class LineReader {
  readonly #queue: string[] = [];
  readonly #waiting: ((line: string | undefined) => void)[] = [];
  #closed = false;
  readonly #close: () => void;

  constructor(input: NodeJS.ReadableStream, signal: AbortSignal | undefined) {
    const lines = createInterface({ input, terminal: false });
    lines.on('line', (line) => {
      const next = this.#waiting.shift();
      if (next === undefined) this.#queue.push(line);
      else next(line);
    });
    const end = () => {
      this.#closed = true;
      for (const next of this.#waiting.splice(0)) next(undefined);
    };
    lines.once('close', end);
    signal?.addEventListener('abort', end, { once: true });
    this.#close = () => {
      signal?.removeEventListener('abort', end);
      lines.close();
    };
  }

  /** The next line, or undefined when the input ended (Ctrl-D) or the command was interrupted. */
  next(): Promise<string | undefined> {
    const line = this.#queue.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.#closed) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  close(): void {
    this.#close();
  }
}

/** Handlers for `call`: interactive on a terminal, a clear decline without one. */
export function cliElicitation(
  io: CliIO,
  printer: Printer,
  openUrl: (url: string) => Promise<void>,
): CliElicitation {
  const input = io.stdin;
  const interactive = input?.isTTY === true && printer.stderrIsTTY && !printer.json;
  const why =
    printer.json && input?.isTTY === true
      ? 'answers are not asked for with --json'
      : 'stdin or stderr is not a terminal, so there is nobody to ask';
  const declined = (server: string, message: string) => {
    printer.lineErr(
      `interlock: declined the question server '${server}' asked ("${visible(message)}"): ${why}.`,
    );
    return { action: 'decline' as const };
  };
  if (!interactive || input === undefined) {
    return {
      onElicitation: (request, { server }) => declined(server, request.message),
      onUrlElicitation: (request, { server }) => declined(server, request.message),
    };
  }
  // One question at a time: two servers asking at once must not interleave their prompts.
  let turn = Promise.resolve();
  const oneAtATime = <T>(ask: () => Promise<T>): Promise<T> => {
    const answer = turn.then(ask);
    turn = answer.then(
      () => undefined,
      () => undefined,
    );
    return answer;
  };
  const withLines = async <T>(ask: (lines: LineReader) => Promise<T>): Promise<T> => {
    const lines = new LineReader(input, io.signal);
    try {
      return await ask(lines);
    } finally {
      lines.close();
    }
  };
  return {
    onElicitation: (request, { server }) =>
      oneAtATime(() =>
        withLines(async (lines) => {
          printer.lineErr(
            `${printer.style('cyan', `server '${server}' asks:`, 'err')} ${visible(request.message)}`,
          );
          printer.writeErr('Answer? [y/N] ');
          const consent = await lines.next();
          if (consent === undefined) return { action: 'cancel' };
          if (!/^y(es)?$/i.test(consent.trim())) return { action: 'decline' };
          const content: Record<string, unknown> = {};
          for (const field of formFields(request.requestedSchema)) {
            const value = await askField(field, lines, printer);
            if (value === CANCELLED) return { action: 'cancel' };
            if (value !== undefined) content[field.name] = value;
          }
          return { action: 'accept', content } as ElicitResult;
        }),
      ),
    onUrlElicitation: (request, { server }) =>
      oneAtATime(() =>
        withLines(async (lines) => {
          printer.lineErr(
            `${printer.style('cyan', `server '${server}' asks you to open a URL:`, 'err')} ${visible(request.message)}`,
          );
          printer.lineErr(`  URL:  ${visible(request.url)}`);
          printer.lineErr(`  host: ${printer.style('bold', visible(request.host), 'err')}`);
          if (request.punycode) {
            printer.lineErr(
              `  ${printer.style('yellow', 'warning:', 'err')} the host is punycode; it reads as '${visible(request.displayHost)}' and may imitate another site.`,
            );
          }
          printer.writeErr('Open it in your browser? [y/N] ');
          const consent = await lines.next();
          if (consent === undefined) return { action: 'cancel' };
          if (!/^y(es)?$/i.test(consent.trim())) return { action: 'decline' };
          await openUrl(request.url);
          return { action: 'accept' };
        }),
      ),
  };
}

const CANCELLED = Symbol('cancelled');

/** The prompt's hint: type, options, default. */
function hintOf(field: FormField): string {
  const parts: string[] = [];
  if (field.kind === 'choice' || field.kind === 'choices') {
    const options = field.options.map(
      (o, i) => `${i + 1}=${o.title === o.value ? o.value : `${o.title} (${o.value})`}`,
    );
    parts.push(
      `${field.kind === 'choices' ? 'one or more, comma-separated: ' : 'one of: '}${options.join(', ')}`,
    );
  } else {
    parts.push(field.format === undefined ? field.kind : `${field.kind}, ${field.format}`);
  }
  if (field.required) parts.push('required');
  if (field.default !== undefined) parts.push(`default ${JSON.stringify(field.default)}`);
  return parts.join('; ');
}

/** Asks one field until it fits (at most {@link MAX_FIELD_ATTEMPTS} times). Empty leaves it to its default. */
async function askField(
  field: FormField,
  lines: LineReader,
  printer: Printer,
): Promise<unknown | typeof CANCELLED> {
  for (let attempt = 1; attempt <= MAX_FIELD_ATTEMPTS; attempt++) {
    const description = field.description === undefined ? '' : ` - ${visible(field.description)}`;
    printer.writeErr(`  ${visible(field.title)}${description} (${visible(hintOf(field))}): `);
    const line = await lines.next();
    if (line === undefined) return CANCELLED;
    const text = line.trim();
    if (text === '') {
      if (!field.required || field.default !== undefined) return undefined;
      printer.lineErr('  an answer is required');
      continue;
    }
    const parsed = parseAnswer(field, text);
    if (parsed.ok) return parsed.value;
    printer.lineErr(`  ${parsed.problem}`);
  }
  return CANCELLED;
}

function parseAnswer(
  field: FormField,
  text: string,
): { ok: true; value: unknown } | { ok: false; problem: string } {
  const pick = (token: string) => {
    const byNumber = /^\d+$/.test(token) ? field.options[Number(token) - 1] : undefined;
    return (byNumber ?? field.options.find((o) => o.value === token || o.title === token))?.value;
  };
  switch (field.kind) {
    case 'boolean':
      if (/^(y|yes|true)$/i.test(text)) return { ok: true, value: true };
      if (/^(n|no|false)$/i.test(text)) return { ok: true, value: false };
      return { ok: false, problem: 'answer y or n' };
    case 'number':
    case 'integer': {
      const n = Number(text);
      if (!Number.isFinite(n) || (field.kind === 'integer' && !Number.isInteger(n)))
        return { ok: false, problem: `answer ${field.kind === 'integer' ? 'a whole number' : 'a number'}` };
      return { ok: true, value: n };
    }
    case 'choice': {
      const value = pick(text);
      return value === undefined
        ? { ok: false, problem: 'answer one of the options (its number or value)' }
        : { ok: true, value };
    }
    case 'choices': {
      const values = text.split(',').map((t) => pick(t.trim()));
      if (values.some((v) => v === undefined))
        return { ok: false, problem: 'answer options from the list, comma-separated' };
      return { ok: true, value: [...new Set(values)] };
    }
    default:
      return { ok: true, value: text };
  }
}
