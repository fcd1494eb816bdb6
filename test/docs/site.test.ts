/**
 * The guides site builds (`node scripts/docs.mjs`: TypeDoc, then `mkdocs build --strict`), every page of the
 * navigation exists, every snippet include resolved into the page, and the Mermaid diagrams are in place.
 * Then headless Chromium loads the home page and the security guide from a loopback server and the
 * screenshots are kept under site/screenshots/ (CI keeps them as artifacts).
 *
 * Skipped, with the reason, when Debian's `mkdocs` (or `chromium`) is not installed; CI installs both.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SITE = join(ROOT, 'site');
const DOCS = join(ROOT, 'docs');
const BUILD_TIMEOUT_MS = 240_000;
const BROWSER_TIMEOUT_MS = 60_000;
const SECURITY_PAGE = 'guides/security.md';

function available(command: string): boolean {
  const probe = spawnSync(command, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  return probe.error === undefined && probe.status === 0;
}

const MKDOCS = process.env.MKDOCS ?? 'mkdocs';
const hasMkdocs = available(MKDOCS);
const CHROMIUM = [process.env.CHROMIUM, 'chromium', 'chromium-browser'].find(
  (c): c is string => c !== undefined && available(c),
);
const NO_MKDOCS = `'${MKDOCS}' is not installed (CI installs Debian's mkdocs and mkdocs-material)`;
const NO_CHROMIUM = "no 'chromium' on PATH (CI installs Debian's chromium; or set CHROMIUM)";

/** The pages listed under `nav:` in mkdocs.yml, in order (docs-relative paths). */
function navPages(): string[] {
  const lines = readFileSync(join(ROOT, 'mkdocs.yml'), 'utf8').split('\n');
  const start = lines.findIndex((line) => line.startsWith('nav:'));
  const pages: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^\S/.test(line)) break; // the next top-level key
    const match = /:\s*([\w./-]+\.md)\s*$/.exec(line);
    if (match?.[1] !== undefined) pages.push(match[1]);
  }
  return pages;
}

/** Where mkdocs (use_directory_urls) writes a page: `a/b.md` -> `a/b/index.html`, `a/index.md` -> `a/index.html`. */
function builtFile(page: string): string {
  const withoutExt = page.replace(/\.md$/, '');
  const path = withoutExt === 'index' || withoutExt.endsWith('/index') ? withoutExt : `${withoutExt}/index`;
  return join(SITE, `${path}.html`);
}

/** The URL path of a page on the served site. */
function urlPath(page: string): string {
  return `/${relative(SITE, builtFile(page))
    .split(sep)
    .join('/')
    .replace(/index\.html$/, '')}`;
}

function walk(dir: string, keep: (file: string) => boolean): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(path, keep));
    else if (keep(path)) out.push(path);
  }
  return out;
}

/** The text a reader sees in an HTML page (tags removed, common entities decoded). */
function visibleText(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&amp;/g, '&');
}

/** Snippet includes (`--8<-- "path"`) in the hand-written pages: page -> included paths. */
function snippetIncludes(): Map<string, string[]> {
  const skip = [join(DOCS, 'reference', 'api') + sep, join(DOCS, 'snippets') + sep];
  const pages = walk(DOCS, (f) => f.endsWith('.md') && !skip.some((dir) => f.startsWith(dir)));
  const map = new Map<string, string[]>();
  for (const file of pages) {
    const paths = [...readFileSync(file, 'utf8').matchAll(/^\s*-{2,}8<-{2,}\s+"([^"]+)"\s*$/gm)].map(
      (m) => m[1]!,
    );
    if (paths.length > 0) map.set(relative(DOCS, file).split(sep).join('/'), paths);
  }
  return map;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.xml': 'application/xml',
};

/** Serves site/ on 127.0.0.1, port 0. */
async function serveSite(): Promise<{ server: Server; base: string }> {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    let file = resolve(SITE, `.${path}`);
    if (file !== SITE && !file.startsWith(SITE + sep)) {
      res.writeHead(403).end();
      return;
    }
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (!existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Runs headless Chromium to screenshot `url` into `png`; kills it if it hangs. */
function screenshot(
  chromium: string,
  url: string,
  png: string,
): Promise<{ code: number | null; output: string }> {
  const profile = mkdtempSync(join(tmpdir(), 'interlock-chromium-'));
  const child: ChildProcess = spawn(
    chromium,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
      `--screenshot=${png}`,
      '--window-size=1280,900',
      '--virtual-time-budget=3000',
      url,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8_000);
  });
  return new Promise((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), BROWSER_TIMEOUT_MS);
    child.once('close', (code) => {
      clearTimeout(timer);
      rmSync(profile, { recursive: true, force: true });
      done({ code, output });
    });
  });
}

/** Width, height and the number of distinct byte values in the decoded image data of a PNG. */
function inspectPng(file: string): { width: number; height: number; distinctBytes: number } {
  const png = readFileSync(file);
  expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  let offset = 8;
  let width = 0;
  let height = 0;
  const data: Buffer[] = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('ascii', offset + 4, offset + 8);
    const body = png.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
    }
    if (type === 'IDAT') data.push(body);
    offset += 12 + length;
  }
  const pixels = inflateSync(Buffer.concat(data));
  const seen = new Set<number>();
  for (let i = 0; i < pixels.length && seen.size < 256; i += 7) seen.add(pixels[i]!);
  return { width, height, distinctBytes: seen.size };
}

describe('the guides site', () => {
  let build: { status: number | null; output: string } | undefined;

  beforeAll(() => {
    if (!hasMkdocs) return;
    const run = spawnSync(process.execPath, [join(ROOT, 'scripts', 'docs.mjs')], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: BUILD_TIMEOUT_MS,
    });
    build = { status: run.status, output: `${run.stdout}\n${run.stderr}`.slice(-8_000) };
  }, BUILD_TIMEOUT_MS + 10_000);

  it('builds with TypeDoc and mkdocs --strict', (ctx) => {
    if (!hasMkdocs) ctx.skip(NO_MKDOCS);
    expect(build?.status, build?.output).toBe(0);
  });

  it('has a built page for every page in the navigation', (ctx) => {
    if (!hasMkdocs) ctx.skip(NO_MKDOCS);
    const pages = navPages();
    expect(pages).toContain('index.md');
    expect(pages).toContain(SECURITY_PAGE);
    expect(pages).toContain('reference/api/index.md');
    for (const page of pages) expect(existsSync(builtFile(page)), `${page} -> ${builtFile(page)}`).toBe(true);
  });

  it('resolved every snippet include into the page that includes it', (ctx) => {
    if (!hasMkdocs) ctx.skip(NO_MKDOCS);
    const includes = snippetIncludes();
    expect(includes.size).toBeGreaterThan(3);
    for (const [page, paths] of includes) {
      const text = visibleText(readFileSync(builtFile(page), 'utf8'));
      for (const path of paths) {
        expect(existsSync(join(ROOT, path)), `${page} includes missing ${path}`).toBe(true);
        // The longest line of the file is distinctive enough to prove the file's text is on the page.
        const longest = readFileSync(join(ROOT, path), 'utf8')
          .split('\n')
          .map((line) => line.trim())
          .sort((a, b) => b.length - a.length)[0]!;
        expect(text, `${page} does not show ${path}`).toContain(longest);
      }
    }
    for (const file of walk(SITE, (f) => f.endsWith('.html'))) {
      const html = readFileSync(file, 'utf8');
      expect(html.includes('--8<--') || html.includes('--8&lt;--'), `include marker left in ${file}`).toBe(
        false,
      );
    }
  });

  it('renders the Mermaid blocks as superfences output for Material to draw', (ctx) => {
    if (!hasMkdocs) ctx.skip(NO_MKDOCS);
    const html = readFileSync(builtFile('architecture.md'), 'utf8');
    const blocks = html.match(/<pre class="mermaid"><code>/g) ?? [];
    expect(blocks.length).toBe(2);
    expect(html).toContain('sequenceDiagram');
    expect(html).not.toContain('```mermaid');
  });

  describe('in headless Chromium', () => {
    let served: { server: Server; base: string } | undefined;

    beforeAll(async () => {
      if (hasMkdocs && CHROMIUM !== undefined && build?.status === 0) served = await serveSite();
    });
    afterAll(async () => {
      await new Promise<void>((done) => (served === undefined ? done() : served.server.close(() => done())));
    });

    const targets = [
      { name: 'home', page: 'index.md', heading: 'Interlock' },
      { name: 'security', page: SECURITY_PAGE, heading: undefined },
    ];
    for (const { name, page, heading } of targets) {
      it(
        `loads ${page} and keeps a non-blank screenshot in site/screenshots/${name}.png`,
        async (ctx) => {
          if (!hasMkdocs) ctx.skip(NO_MKDOCS);
          if (CHROMIUM === undefined) ctx.skip(NO_CHROMIUM);
          if (!navPages().includes(page)) ctx.skip(`${page} is not in the navigation yet`);
          expect(served, 'the site did not build').toBeDefined();
          const html = readFileSync(builtFile(page), 'utf8');
          if (heading !== undefined) expect(html).toContain(`<h1 id="interlock">${heading}`);

          const dir = join(SITE, 'screenshots');
          mkdirSync(dir, { recursive: true });
          const png = join(dir, `${name}.png`);
          rmSync(png, { force: true });
          const run = await screenshot(CHROMIUM!, `${served!.base}${urlPath(page)}`, png);
          expect(existsSync(png), `no screenshot; chromium said:\n${run.output}`).toBe(true);
          expect(statSync(png).size).toBeGreaterThan(20_000);
          const image = inspectPng(png);
          expect(image).toMatchObject({ width: 1280, height: 900 });
          // A blank page decodes to a handful of byte values; text and navigation give many.
          expect(image.distinctBytes).toBeGreaterThan(32);
        },
        BROWSER_TIMEOUT_MS + 10_000,
      );
    }
  });
});
