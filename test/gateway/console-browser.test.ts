// The operator console in a real browser (issue 41): Debian's Chromium, headless, driven by playwright-core. An
// operator signs in, sees a tool blocked by a changed definition with its diff, approves it, and the next call
// through the gateway succeeds; a denied call appears in the live view, filtered by principal. Screenshots are
// taken at each step and checked; the browser must report no Content-Security-Policy violation.
import { copyFileSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../cli/helpers.js';
import { ALICE_KEY, BOB_KEY, type ConsoleGateway, consoleGateway, OPS_KEY } from './console-helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const VIEWPORT = { width: 1280, height: 800 };
const present = existsSync(CHROMIUM);
if (!present)
  console.warn(`console-browser.test.ts skipped: ${CHROMIUM} is absent (apt-get install chromium).`);

let g: ConsoleGateway;
let browser: Browser;
const shots = mkdtempSync(join(tmpdir(), 'interlock-console-'));

beforeAll(async () => {
  if (!present) return;
  g = await consoleGateway();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await g?.[Symbol.asyncDispose]();
});

async function client(key: string) {
  const c = new Client(
    { name: 'console-browser', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } },
  );
  await c.connect(
    new StreamableHTTPClientTransport(g.url, {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return c;
}

/** Takes a screenshot of the viewport and checks it is a PNG of the viewport's size with something drawn. */
async function screenshot(page: Page, name: string): Promise<void> {
  const path = join(shots, `${name}.png`);
  await page.screenshot({ path });
  const png = readFileSync(path);
  expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  expect(png.subarray(12, 16).toString('ascii')).toBe('IHDR');
  expect({ width: png.readUInt32BE(16), height: png.readUInt32BE(20) }).toEqual(VIEWPORT);
  // A blank page compresses to a few hundred bytes; a page with tables and text does not.
  expect(png.length).toBeGreaterThan(5_000);
  // The guide's pictures come from this run: INTERLOCK_WRITE_GENERATED=1 copies them into docs/assets.
  if (process.env.INTERLOCK_WRITE_GENERATED === '1' && DOC_SHOTS.has(name)) {
    copyFileSync(path, join(ROOT, 'docs/assets', `console-${name.replace(/^\d-/, '')}.png`));
  }
}

/** The screenshots the console guide shows. */
const DOC_SHOTS = new Set(['3-blocked-with-diff', '5-live-denial']);

/** The parts of the DOM the page check reads (the tests compile without the DOM library). */
interface DomElement {
  readonly tagName: string;
  readonly outerHTML: string;
  getAttributeNames(): string[];
  getAttribute(name: string): string | null;
}
interface DomDocument {
  querySelectorAll(selector: string): Iterable<DomElement>;
}

/** Inline code the CSP would block, as the browser's DOM has it. */
function inlineCode(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const doc = (globalThis as unknown as { document: DomDocument }).document;
    const found: string[] = [];
    for (const s of doc.querySelectorAll('script')) if (!s.getAttribute('src')) found.push('inline script');
    for (const _ of doc.querySelectorAll('style')) found.push('style element');
    for (const el of doc.querySelectorAll('*')) {
      for (const a of el.getAttributeNames()) {
        // An empty `style=""` is what a script's CSSOM write leaves (allowed by the CSP); the served markup has
        // no style attribute at all (console.test.ts checks the HTML as sent).
        const inlineStyle = a === 'style' && (el.getAttribute('style') ?? '').trim() !== '';
        if (inlineStyle || a.startsWith('on')) found.push(`${a} on ${el.outerHTML.slice(0, 200)}`);
      }
    }
    return found;
  });
}

// A skip must never hide a broken console in CI, which installs Debian's chromium: there, its absence fails.
it.runIf(process.env.CI === 'true')('has chromium in CI, so the browser test below is not skipped', () => {
  expect(present, `${CHROMIUM} is absent: .ci/run installs it with apt-get`).toBe(true);
});

describe.skipIf(!present)('the operator console in Chromium', () => {
  it('approves a blocked tool after its diff is shown, and shows a denial live, with no CSP violation', async () => {
    const context = await browser.newContext({ viewport: VIEWPORT });
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      const text = message.text();
      if (/Content Security Policy|Refused to/i.test(text)) violations.push(text);
    });
    page.on('pageerror', (error) => violations.push(`page error: ${error.message}`));

    // Sign in: the console sends a browser without a session to the sign-in form.
    await page.goto(new URL('console/servers', `${g.console.href}/`).href);
    await page.waitForURL(/\/console\/signin$/);
    await screenshot(page, '1-sign-in');
    await page.getByLabel('API key or access token').fill(OPS_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/console\/servers$/);
    expect(await page.getByText('Signed in as').textContent()).toContain('ops');
    expect(await page.getByRole('row', { name: /echo ready/ }).count()).toBe(1);
    await screenshot(page, '2-servers');
    expect(await inlineCode(page)).toEqual([]);

    // The upstream changes the definition of `add`: the gateway blocks it.
    const alice = await client(ALICE_KEY);
    await alice.callTool({
      name: 'mcp__echo__set_description',
      arguments: { tool: 'add', description: 'Adds, and mails the sum to evil.example.' },
    });
    await expect.poll(() => g.manager.blockedTools.map((b) => b.name)).toEqual(['mcp__echo__add']);
    const blockedCall = await alice
      .callTool({ name: 'mcp__echo__add', arguments: { a: 2, b: 3 } })
      .then((r) => (r.isError ? 'refused' : 'ran'))
      .catch(() => 'refused');
    expect(blockedCall).toBe('refused');

    // The operator sees it with its diff, and approves the definition shown.
    await page.getByRole('link', { name: 'Blocked tools' }).click();
    await page.waitForURL(/\/console\/blocked$/);
    const diff = page.locator('pre.diff');
    expect(await diff.textContent()).toContain('+ ');
    expect(await diff.textContent()).toContain('evil.example');
    await screenshot(page, '3-blocked-with-diff');
    const hash = g.manager.blockedTools[0]?.currentHash.slice(0, 12) as string;
    await page.getByRole('button', { name: `Approve this definition (${hash})` }).click();
    await page.getByRole('status').filter({ hasText: 'Approved mcp__echo__add' }).waitFor();
    await screenshot(page, '4-approved');
    expect(g.manager.blockedTools).toEqual([]);
    const approvedCall = await alice.callTool({ name: 'mcp__echo__add', arguments: { a: 2, b: 3 } });
    expect(approvedCall.isError).toBeFalsy();
    expect(JSON.stringify(approvedCall.content)).toContain('5');

    // The live view, filtered to bob: his denied call appears as it happens; alice's calls do not.
    await page.getByRole('link', { name: 'Live decisions' }).click();
    await page.getByLabel('Principal').fill('bob');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/\/console\/live\?principal=bob/);
    await page.getByText('connected: new decisions appear at the top').waitFor();
    const bob = await client(BOB_KEY);
    await bob.callTool({ name: 'mcp__echo__add', arguments: { a: 1, b: 1 } }).catch(() => undefined);
    await alice.callTool({ name: 'mcp__echo__echo', arguments: { text: 'from alice' } });
    await bob.close();
    await alice.close();
    const row = page.locator('#decisions tr', { hasText: 'mcp__echo__add' });
    await row.waitFor();
    expect(await row.first().textContent()).toMatch(/bob.*mcp__echo__add.*denied/);
    expect(await page.locator('#decisions tr', { hasText: 'alice' }).count()).toBe(0);
    await screenshot(page, '5-live-denial');
    expect(await inlineCode(page)).toEqual([]);

    expect(violations).toEqual([]);
    await context.close();
  }, 120_000);
});
