/**
 * The guides site builds (`node scripts/docs.mjs`: TypeDoc, then `mkdocs build --strict`), every page of the
 * navigation exists, every snippet include resolved into the page, code blocks carry file names a user knows,
 * guides named in the text are links, and API pages are in the navigation. Then Debian's Chromium, driven by
 * playwright-core, loads pages from a loopback server with every other request refused (issue 39): the
 * architecture diagrams are drawn as SVG by the mermaid bundle that ships with the site, no code line of the
 * gateway guide runs past its block, and the screenshots are kept under site/screenshots/ (CI keeps them).
 *
 * Skipped, with the reason, when Debian's `mkdocs` (or `chromium`) is not installed; CI installs both.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateSync } from 'node:zlib';
import { type Browser, chromium, type Page } from 'playwright-core';
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
/** A browser's executable: playwright-core launches it by path. */
const CHROMIUM = [process.env.CHROMIUM, 'chromium', 'chromium-browser']
  .filter((c): c is string => c !== undefined && available(c))
  .map((c) => (c.includes('/') ? c : spawnSync('which', [c], { encoding: 'utf8' }).stdout.trim()))
  .find((c) => c !== '');
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

  // A skip must never hide a broken site in CI: there, missing tools are a failure (issue 39).
  it.runIf(process.env.CI === 'true')('has mkdocs and chromium in CI, so no check below is skipped', () => {
    expect(hasMkdocs, NO_MKDOCS).toBe(true);
    expect(CHROMIUM, NO_CHROMIUM).toBeDefined();
  });

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

  it('writes the Mermaid blocks as <div class="mermaid"> for the bundled mermaid, which ships with the site', (ctx) => {
    if (!hasMkdocs) ctx.skip(NO_MKDOCS);
    const html = readFileSync(builtFile('architecture.md'), 'utf8');
    const blocks = html.match(/<div class="mermaid">/g) ?? [];
    expect(blocks.length).toBe(2);
    expect(html).toContain('sequenceDiagram');
    expect(html).not.toContain('```mermaid');
    // Material 8.2 fetches mermaid from a CDN for <pre class="mermaid">: there must be none.
    expect(html).not.toContain('<pre class="mermaid">');
    expect(html).toMatch(/<script src="[./]*assets\/javascripts\/vendor\/mermaid\.min\.js"><\/script>/);
    expect(statSync(join(SITE, 'assets/javascripts/vendor/mermaid.min.js')).size).toBeGreaterThan(1_000_000);
  });

  it('titles code blocks with the file name a user knows, not a path inside this repository', (ctx) => {
    if (!hasMkdocs) ctx.skip(NO_MKDOCS);
    const gateway = readFileSync(builtFile('guides/gateway.md'), 'utf8');
    expect(gateway).toContain('<span class="filename">claude_desktop_config.json</span>');
    const repoPaths: string[] = [];
    for (const file of walk(SITE, (f) => f.endsWith('.html'))) {
      for (const [, title] of readFileSync(file, 'utf8').matchAll(
        /<span class="filename">([^<]*)<\/span>/g,
      )) {
        if (title!.startsWith('docs/')) repoPaths.push(`${relative(SITE, file)}: ${title}`);
      }
    }
    expect(repoPaths).toEqual([]);
  });

  it('links "the security guide" (and the other guides) where a page names one', (ctx) => {
    if (!hasMkdocs) ctx.skip(NO_MKDOCS);
    const unlinked: string[] = [];
    for (const file of walk(SITE, (f) => f.endsWith('.html'))) {
      const text = readFileSync(file, 'utf8')
        .replace(/<a\b[^>]*>[\s\S]*?<\/a>/g, '')
        .replace(/<(pre|code|script)\b[\s\S]*?<\/\1>/g, '');
      const match = /\bthe (security|gateway|fleet|reliability|frameworks|CLI) guide\b/.exec(
        visibleText(text),
      );
      if (match !== null) unlinked.push(`${relative(SITE, file)}: ${match[0]}`);
    }
    expect(unlinked).toEqual([]);
    const capabilitySet = readFileSync(builtFile('reference/api/security/classes/CapabilitySet.md'), 'utf8');
    expect(capabilitySet).toMatch(/<a href="(\.\.\/)+guides\/security\/">the security guide<\/a>/);
  });

  it("reaches the gateway, the adapters, the fleet and the CLI from the home page's Where next", (ctx) => {
    if (!hasMkdocs) ctx.skip(NO_MKDOCS);
    const html = readFileSync(builtFile('index.md'), 'utf8');
    const whereNext = html.slice(
      html.indexOf('id="where-next"'),
      html.indexOf('</ul>', html.indexOf('id="where-next"')),
    );
    for (const page of ['guides/gateway/', 'guides/frameworks/', 'guides/fleet/', 'guides/cli/']) {
      expect(whereNext).toContain(`href="${page}"`);
    }
  });

  it('shows an API page in the navigation, marked as the page the reader is on', (ctx) => {
    if (!hasMkdocs) ctx.skip(NO_MKDOCS);
    const html = readFileSync(builtFile('reference/api/security/classes/CapabilitySet.md'), 'utf8');
    const active = [
      ...html.matchAll(/<a href="([^"]*)" class="md-nav__link md-nav__link--active">\s*([^<]*?)\s*<\/a>/g),
    ];
    expect(active.map((m) => m[2])).toContain('CapabilitySet');
    // Its area and kind are the open sections around it.
    expect(html).toMatch(
      /md-nav__item--active md-nav__item--nested[\s\S]*security[\s\S]*Classes[\s\S]*CapabilitySet/,
    );
  });

  describe('in headless Chromium', () => {
    let served: { server: Server; base: string } | undefined;
    let browser: Browser | undefined;
    /** Requests the pages made to anything but the loopback site: the site must work offline. */
    const offsite: string[] = [];

    beforeAll(async () => {
      if (!hasMkdocs || CHROMIUM === undefined || build?.status !== 0) return;
      served = await serveSite();
      // Debian's chromium, driven by playwright-core: no browser download. Playwright gives it a fresh profile.
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        chromiumSandbox: false,
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
        timeout: BROWSER_TIMEOUT_MS,
      });
    }, BROWSER_TIMEOUT_MS + 10_000);
    afterAll(async () => {
      await browser?.close();
      await new Promise<void>((done) => (served === undefined ? done() : served.server.close(() => done())));
    });

    /** A page of the site at 1280 x 900, with every request off the loopback site refused and recorded. */
    async function open(page: string): Promise<Page> {
      const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
      await context.route('**/*', (route) => {
        const url = route.request().url();
        if (url.startsWith(served!.base)) return route.continue();
        offsite.push(url);
        return route.abort();
      });
      const tab = await context.newPage();
      await tab.goto(`${served!.base}${urlPath(page)}`, { waitUntil: 'load' });
      return tab;
    }

    function ready(ctx: { skip: (reason: string) => void }): void {
      if (!hasMkdocs) ctx.skip(NO_MKDOCS);
      if (CHROMIUM === undefined) ctx.skip(NO_CHROMIUM);
      expect(browser, `the site did not build or chromium did not start:\n${build?.output}`).toBeDefined();
    }

    async function keep(tab: Page, name: string, fullPage = false): Promise<string> {
      const dir = join(SITE, 'screenshots');
      mkdirSync(dir, { recursive: true });
      const png = join(dir, `${name}.png`);
      await tab.screenshot({ path: png, fullPage });
      return png;
    }

    it(
      'draws the architecture diagrams as SVG, with no raw mermaid text left on the page',
      async (ctx) => {
        ready(ctx);
        const tab = await open('architecture.md');
        // Drawing is asynchronous: wait until each block holds a drawn <svg>.
        const blocks = await tab.locator('div.mermaid').count();
        expect(blocks).toBe(2);
        await tab
          .locator('div.mermaid > svg')
          .nth(blocks - 1)
          .waitFor({ timeout: BROWSER_TIMEOUT_MS });
        await tab.locator('div.mermaid > svg').first().waitFor({ timeout: BROWSER_TIMEOUT_MS });
        const drawn = await tab.$$eval('div.mermaid > svg', (svgs) =>
          svgs.map((svg) => {
            const box = svg.getBoundingClientRect();
            return { width: box.width, height: box.height, text: svg.textContent ?? '' };
          }),
        );
        expect(drawn).toHaveLength(2);
        for (const svg of drawn) {
          expect(svg.width).toBeGreaterThan(100);
          expect(svg.height).toBeGreaterThan(100);
        }
        expect(drawn[0]!.text).toContain('interop');
        expect(drawn[1]!.text).toContain('MCPClientManager');
        const text = await tab.innerText('article');
        expect(text).not.toMatch(/flowchart BT|sequenceDiagram|participant W as/);
        await tab.locator('div.mermaid').first().scrollIntoViewIfNeeded();
        const image = inspectPng(await keep(tab, 'architecture'));
        expect(image).toMatchObject({ width: 1280, height: 900 });
        expect(image.distinctBytes).toBeGreaterThan(32);
        await tab.context().close();
      },
      2 * BROWSER_TIMEOUT_MS,
    );

    it(
      "shows every code line of the gateway guide inside its block: the desktop config's serve is visible",
      async (ctx) => {
        ready(ctx);
        const tab = await open('guides/gateway.md');
        const blocks = await tab.$$eval('article pre > code', (codes) =>
          codes.map((code) => ({
            text: (code.textContent ?? '').slice(0, 60),
            scrollWidth: code.scrollWidth,
            clientWidth: code.clientWidth,
          })),
        );
        expect(blocks.length).toBeGreaterThan(4);
        // Nothing runs past the block's edge: long lines wrap.
        expect(blocks.filter((b) => b.scrollWidth > b.clientWidth + 1)).toEqual([]);
        const desktop = tab.locator('article .highlight', { hasText: 'claude_desktop_config.json' }).first();
        const serve = desktop.locator('code span', { hasText: '"serve"' }).first();
        const [block, word] = [await desktop.boundingBox(), await serve.boundingBox()];
        expect(word, 'the desktop config has no visible "serve"').not.toBeNull();
        expect(word!.x + word!.width).toBeLessThanOrEqual(block!.x + block!.width);
        const inspector = tab.locator('article .highlight', { hasText: 'Inspector commands' }).first();
        await inspector.scrollIntoViewIfNeeded();
        await keep(tab, 'gateway');
        await tab.context().close();
      },
      2 * BROWSER_TIMEOUT_MS,
    );

    it(
      'loads the home page with its navigation and keeps a non-blank screenshot',
      async (ctx) => {
        ready(ctx);
        const tab = await open('index.md');
        expect(await tab.innerText('article h1')).toMatch(/^Interlock\b/);
        const image = inspectPng(await keep(tab, 'home'));
        expect(image).toMatchObject({ width: 1280, height: 900 });
        expect(image.distinctBytes).toBeGreaterThan(32);
        await tab.context().close();
      },
      2 * BROWSER_TIMEOUT_MS,
    );

    it('asked nothing of the network: fonts, scripts and diagrams all come from the site', (ctx) => {
      ready(ctx);
      expect(offsite).toEqual([]);
    });
  });
});
