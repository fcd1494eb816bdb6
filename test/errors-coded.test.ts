/**
 * Issue 15 guard: every error Interlock throws is coded (src/errors.ts). An uncoded `new Error(` / `new TypeError(`
 * / `new RangeError(` in src/ must be one of the exceptions below, each with the reason it is not ours to code.
 * Entries are found by the text on the line, not by path, so moving a file does not break them; an entry that no
 * longer matches anything fails too, so the list cannot go stale.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');

/** Text on the line of an allowed uncoded error, and why it is allowed. */
const ALLOWED: readonly { text: string; why: string }[] = [
  {
    text: "'ProcessStdioTransport already started'",
    why: 'a programming error, as the SDK transports throw it',
  },
  {
    text: "'An inbound chain is already installed on this transport'",
    why: 'a programming error (a transport carries one connection), as the SDK transports throw it',
  },
  {
    text: 'skipped a stdout line that is not a JSON-RPC',
    why: "passed to the SDK Transport's onerror as a warning",
  },
  {
    text: '(the server ${exit})',
    why: 'adds the exit to an SDK connect error; becomes the cause of CONNECTION_FAILED',
  },
  {
    text: "Redirect refused (redirect: 'error')",
    why: "a fetch implementation: fetch's contract is a TypeError",
  },
  { text: 'redirects from ${target.origin}', why: "a fetch implementation: fetch's contract is a TypeError" },
  { text: "new TypeError('fetch failed'", why: "a fetch implementation: fetch's contract is a TypeError" },
  {
    text: "'Response.clone: Body has already been consumed.'",
    why: "a Response of the fetch implementation: the Fetch standard's contract is a TypeError",
  },
  {
    text: "'Body is unusable: Body has already been read'",
    why: "a Response of the fetch implementation: the Fetch standard's contract is a TypeError",
  },
  {
    text: 'outside 200 to 599',
    why: "the cause of a fetch implementation's TypeError, as undici's fetch puts its own there",
  },
  { text: "'not an IP address'", why: 'an internal parse guard on a value net.isIP already checked' },
  {
    text: 'No IPv${wanted} address for',
    why: "a dns.lookup implementation: its contract is an Error with code 'ENOTFOUND'",
  },
  { text: 'new Error(String(err))', why: 'normalizes a non-Error for a Node callback' },
  { text: 'new Error(reason)', why: 'recorded on a span, never thrown' },
  {
    text: 'Failed to send cancellation:',
    why: "InterlockClient's direct tools/call: passed to the client's onerror, worded as the SDK client words it",
  },
  {
    text: 'error instanceof Error ? error : new Error(String(error))',
    why: "InterlockClient's direct tools/call: normalizes a non-Error a codec threw, as the SDK client does",
  },
  {
    text: "'audit sink failed'",
    why: 'stands in for a sink that rejected with nothing; becomes the cause of AUDIT_FAILED',
  },
  {
    text: 'Not a session built with SessionInteropMixin',
    why: 'interopState: a programming error, as a TypeError',
  },
  { text: 'must be a positive integer, got', why: 'a programming error on a numeric argument (RangeError)' },
  {
    text: 'printed no LISTENING line',
    why: 'the CLI demo starting its own servers; reported as a demo failure',
  },
  { text: 'it exited with', why: 'the CLI demo starting its own servers; reported as a demo failure' },
];

/** A built-in error constructed in source (coded errors extend InterlockError and are named otherwise). */
const UNCODED = /\bnew (?:Error|TypeError|RangeError)\(/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('errors thrown by src/', () => {
  const hits: { where: string; line: string; next: string }[] = [];
  for (const file of sourceFiles(SRC)) {
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, '');
      if (!UNCODED.test(code) || /^\s*\*/.test(line)) return;
      hits.push({ where: `${relative(SRC, file)}:${i + 1}`, line, next: lines[i + 1] ?? '' });
    });
  }

  it('are coded, but for the listed exceptions', () => {
    // An exception's text may sit on the line after `new Error(` when the formatter wraps it.
    const uncoded = hits.filter(
      (h) => !ALLOWED.some((a) => h.line.includes(a.text) || h.next.includes(a.text)),
    );
    expect(uncoded.map((h) => `${h.where}: ${h.line.trim()}`)).toEqual([]);
  });

  it('has no exception that matches nothing any more', () => {
    const unused = ALLOWED.filter(
      (a) => !hits.some((h) => h.line.includes(a.text) || h.next.includes(a.text)),
    );
    expect(unused.map((a) => a.text)).toEqual([]);
  });

  it('throws nothing uncoded from src/auth', () => {
    expect(hits.filter((h) => h.where.startsWith('auth/')).map((h) => h.where)).toEqual([]);
  });
});
