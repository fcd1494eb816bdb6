/**
 * Issue 43, "the plan is the house": files stay small enough to read in one sitting (docs/shared house style:
 * aim under 400 lines). No file under src/ is over MAX_LINES; split a larger one along its seams.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAX_LINES = 600;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Lines as an editor counts them: a final newline ends the last line, it does not start another. */
function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

describe('files under src/', () => {
  it(`are ${MAX_LINES} lines or fewer each`, () => {
    const files = sourceFiles(join(ROOT, 'src'));
    expect(files.length).toBeGreaterThan(100);
    const over = files
      .map((file) => ({
        file: relative(ROOT, file).split(sep).join('/'),
        lines: lineCount(readFileSync(file, 'utf8')),
      }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(over, `files over ${MAX_LINES} lines: split each along its seams`).toEqual([]);
  });

  it('counts lines as wc -l does for a file that ends in a newline', () => {
    expect(lineCount('a\nb\n')).toBe(2);
    expect(lineCount('a\nb')).toBe(2);
    expect(lineCount('')).toBe(0);
  });
});
