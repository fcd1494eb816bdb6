/** Small text helpers for the CLI's tables and lines. */
import { type Printer, type Style, visible } from './io.js';

/** A table cell: text, optionally styled. Width is measured on the text, before styling. */
export type Cell = string | { text: string; style?: Style | undefined };

const textOf = (cell: Cell): string => (typeof cell === 'string' ? cell : cell.text);

/** First line of `text`, control characters made visible, cut to `max` characters with `…`. */
export function oneLine(text: string | undefined, max = 80): string {
  const first = visible((text ?? '').trim().split('\n')[0] ?? '').trim();
  return first.length > max ? `${first.slice(0, Math.max(1, max - 1))}…` : first;
}

/**
 * Renders rows under a header, columns padded to their widest cell, each line after `indent` spaces. On a
 * terminal the last column is cut to the terminal width.
 */
export function renderTable(
  printer: Printer,
  header: readonly string[],
  rows: readonly Cell[][],
  options: { indent?: number } = {},
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => textOf(r[i] ?? '').length)));
  const columns = printer.columns;
  const pad = ' '.repeat(options.indent ?? 0);
  const lastStart = widths.slice(0, -1).reduce((sum, w) => sum + w + 2, pad.length);
  const room = columns === undefined ? undefined : Math.max(10, columns - lastStart - 1);
  const render = (cells: readonly Cell[], isHeader: boolean): string =>
    cells
      .map((cell, i) => {
        const last = i === cells.length - 1;
        let text = textOf(cell);
        if (last && room !== undefined && text.length > room) text = `${text.slice(0, room - 1)}…`;
        const padded = last ? text : text.padEnd(widths[i] ?? 0);
        const style = isHeader ? 'bold' : typeof cell === 'string' ? undefined : cell.style;
        return style === undefined ? padded : printer.style(style, padded);
      })
      .join('  ')
      .trimEnd();
  return [render(header, true), ...rows.map((r) => render(r, false))].map((line) => pad + line).join('\n');
}

/** `123 ms` or `1.2 s`. */
export function formatMs(ms: number | undefined): string {
  if (ms === undefined) return '-';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
