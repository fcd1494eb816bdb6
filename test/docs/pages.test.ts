/**
 * Checks on the guides' sources that need no mkdocs: the error code reference covers exactly the codes in
 * src/errors.ts, every snippet file is shown by a page and run by a test, every page in the navigation has a
 * source (the API reference is generated at build time), and every page is in the navigation.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DOCS = join(ROOT, 'docs');
const GENERATED = join(DOCS, 'reference', 'api');
/** Snippets the security engineer owns; test/docs/security-snippets.test.ts runs them. */
const SECURITY_SNIPPETS = join(DOCS, 'snippets', 'security');

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

const posix = (path: string) => path.split(sep).join('/');
/** Hand-written pages: not the generated API reference, not files under snippets/ that pages include. */
const pages = walk(DOCS).filter(
  (f) => f.endsWith('.md') && !f.startsWith(GENERATED + sep) && !f.startsWith(join(DOCS, 'snippets') + sep),
);
const includes = pages.flatMap((page) =>
  [...readFileSync(page, 'utf8').matchAll(/^\s*-{2,}8<-{2,}\s+"([^"]+)"\s*$/gm)].map((m) => ({
    page: posix(relative(DOCS, page)),
    path: m[1]!,
  })),
);

describe('the error code reference', () => {
  const text = readFileSync(join(DOCS, 'reference', 'errors.md'), 'utf8');
  const documented = [...text.matchAll(/^### `([A-Z_]+)`$/gm)].map((m) => m[1]);
  const tabled = [...text.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);

  it('has a section for every code in src/errors.ts, and for no other', () => {
    expect([...documented].sort()).toEqual(Object.values(ErrorCode).sort());
  });

  it('lists every code once in its summary table', () => {
    expect([...tabled].sort()).toEqual(Object.values(ErrorCode).sort());
  });

  it('says what each code means and what to do about it', () => {
    for (const section of text.split(/^### /m).slice(1)) {
      expect(section, section.slice(0, 40)).toMatch(/\*\*Means:\*\*/);
      expect(section, section.slice(0, 40)).toMatch(/\*\*Do:\*\*/);
    }
  });
});

describe('snippets', () => {
  // Security snippets are checked by their owner's suite (test/docs/security-snippets.test.ts).
  const snippetFiles = walk(join(DOCS, 'snippets')).filter((f) => !f.startsWith(SECURITY_SNIPPETS + sep));

  it('every include points at an existing file', () => {
    expect(includes.length).toBeGreaterThan(5);
    for (const { page, path } of includes)
      expect(existsSync(join(ROOT, path)), `${page}: ${path}`).toBe(true);
  });

  it('every snippet file is shown by some page', () => {
    const shown = new Set(includes.map((i) => i.path));
    for (const file of snippetFiles) expect(shown.has(posix(relative(ROOT, file))), posix(file)).toBe(true);
  });

  it('every TypeScript snippet is run by a test in test/docs/', () => {
    const suites = [...walk(join(ROOT, 'test', 'docs')), join(ROOT, 'test', 'engine', 'snippets.test.ts')]
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    for (const file of snippetFiles.filter((f) => f.endsWith('.ts'))) {
      const specifier = `../../${posix(relative(ROOT, file)).replace(/\.ts$/, '.js')}`;
      expect(suites, `no test in test/docs/ imports ${specifier}`).toContain(`'${specifier}'`);
    }
  });
});

describe('the navigation', () => {
  it('lists only pages that have a source (or are generated at build time)', () => {
    const config = readFileSync(join(ROOT, 'mkdocs.yml'), 'utf8');
    const nav = config.slice(config.indexOf('\nnav:'), config.indexOf('\ntheme:'));
    const listed = [...nav.matchAll(/:\s*([\w./-]+\.md)\s*$/gm)].map((m) => m[1]!);
    expect(listed.length).toBeGreaterThan(5);
    for (const page of listed) {
      if (page.startsWith('reference/api/')) continue; // written by TypeDoc in scripts/docs.mjs
      expect(existsSync(join(DOCS, page)), `nav lists ${page}, which has no source in docs/`).toBe(true);
    }
  });

  it('has every hand-written page in it', () => {
    const config = readFileSync(join(ROOT, 'mkdocs.yml'), 'utf8');
    for (const page of pages) expect(config, posix(page)).toContain(posix(relative(DOCS, page)));
  });
});
