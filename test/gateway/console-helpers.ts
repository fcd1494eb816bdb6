// Helpers of the operator console's tests (issue 41): a gateway with a real echo fixture upstream and an
// operator console, a browser-like sign-in over plain HTTP, and a small HTML tag reader for the page checks.
import { request } from 'node:http';
import type { GatewayConfigInput } from '../../src/config/gateway.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/index.js';

export const OPS_KEY = 'ops-key-0123456789abcdef012';
export const ALICE_KEY = 'alice-key-0123456789abcdef';
export const BOB_KEY = 'bob-key-0123456789abcdef01';

export interface ConsoleGateway extends AsyncDisposable {
  gateway: Gateway;
  manager: MCPClientManager;
  audit: MemoryAuditSink;
  /** The MCP endpoint. */
  url: URL;
  /** The console's address. */
  console: URL;
}

/**
 * A gateway over the echo fixture: alice (group dev) may call echo and add, bob may call echo only, ops is the
 * operator. `config` overrides the gateway section (e.g. `console: { listen: ... }`).
 */
export async function consoleGateway(config: Partial<GatewayConfigInput> = {}): Promise<ConsoleGateway> {
  const project = CapabilitySet.fromPolicy({
    version: 1,
    rules: [
      { id: 'echo-any', effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] },
      { id: 'add-any', effect: 'allow', resource: 'mcp:echo:add', actions: ['execute'] },
      { id: 'describe', effect: 'allow', resource: 'mcp:echo:set_description', actions: ['execute'] },
    ],
  });
  const manager = new MCPClientManager({ capabilities: project });
  await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
  const audit = new MemoryAuditSink();
  const gateway = new Gateway({
    manager,
    audit,
    config: {
      auth: {
        apiKeys: [
          { key: OPS_KEY, subject: 'ops' },
          { key: ALICE_KEY, subject: 'alice', groups: ['dev'] },
          { key: BOB_KEY, subject: 'bob' },
        ],
      },
      principals: [
        {
          match: { apiKey: { groups: ['dev'] } },
          rules: [
            { id: 'dev-echo', effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] },
            { id: 'dev-add', effect: 'allow', resource: 'mcp:echo:add', actions: ['execute'], maxCalls: 5 },
            {
              id: 'dev-describe',
              effect: 'allow',
              resource: 'mcp:echo:set_description',
              actions: ['execute'],
            },
          ],
        },
        {
          match: { apiKey: { subjects: ['bob'] } },
          rules: [{ id: 'bob-echo', effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] }],
        },
      ],
      operators: { apiKey: { subjects: ['ops'] } },
      http: { port: 0 },
      console: { path: '/console' },
      ...config,
    },
  });
  const address = await gateway.listen();
  return {
    gateway,
    manager,
    audit,
    url: address.url,
    console: address.console as URL,
    async [Symbol.asyncDispose]() {
      await gateway.close();
      await manager.close();
    },
  };
}

/** A form POST as a browser sends it: urlencoded, with the console's Origin unless told otherwise. */
export function postForm(
  url: URL | string,
  fields: Record<string, string>,
  options: { cookie?: string | undefined; origin?: string | null } = {},
): Promise<Response> {
  const target = new URL(url);
  const origin = options.origin === undefined ? target.origin : options.origin;
  return fetch(target, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(origin === null ? {} : { origin }),
      ...(options.cookie === undefined ? {} : { cookie: options.cookie }),
    },
    body: new URLSearchParams(fields).toString(),
  });
}

/** A GET with the session cookie, redirects not followed. */
export function getPage(url: URL | string, cookie?: string): Promise<Response> {
  return fetch(url, { redirect: 'manual', headers: cookie === undefined ? {} : { cookie } });
}

/** Signs in with `key` and returns the `name=value` of the session cookie. */
export async function signIn(consoleUrl: URL, key: string): Promise<string> {
  const response = await postForm(new URL('signin', withSlash(consoleUrl)), { credential: key });
  if (response.status !== 303)
    throw new Error(`sign-in answered ${response.status}: ${await response.text()}`);
  return sessionCookie(response);
}

/** The `name=value` part of a response's session cookie. */
export function sessionCookie(response: Response): string {
  const header = response.headers.getSetCookie().find((c) => c.includes('interlock-console='));
  if (header === undefined) throw new Error('no session cookie was set');
  return header.split(';')[0] as string;
}

/** The console URL with a trailing slash, so relative paths resolve below it. */
export function withSlash(url: URL): URL {
  return new URL(url.href.endsWith('/') ? url.href : `${url.href}/`);
}

/** The CSRF token of a page (its forms' hidden field, or the page's `console-csrf` meta). */
export function csrfOf(html: string): string {
  const tags = htmlTags(html);
  const input = tags.find((t) => t.name === 'input' && t.attributes.name === '_csrf');
  const meta = tags.find((t) => t.name === 'meta' && t.attributes.name === 'console-csrf');
  const token = input?.attributes.value ?? meta?.attributes.content;
  if (token === undefined) throw new Error('the page has no CSRF token');
  return token;
}

/** A GET with headers fetch() will not send as given (`Host`). */
export function rawGet(url: URL, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** One start tag of an HTML document, with its attributes (entities in values decoded). */
export interface HtmlTag {
  name: string;
  attributes: Record<string, string>;
  /** For `script` and `style`: the text up to the end tag. */
  text?: string;
}

/**
 * The start tags of an HTML document: enough of the HTML tokenizer for server-rendered pages (comments, doctype,
 * quoted and unquoted attributes, raw text of script and style). Not a validator.
 */
export function htmlTags(html: string): HtmlTag[] {
  const tags: HtmlTag[] = [];
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    if (lt < 0) break;
    if (html.startsWith('<!--', lt)) {
      i = html.indexOf('-->', lt) + 3;
      continue;
    }
    if (html[lt + 1] === '!' || html[lt + 1] === '/') {
      i = html.indexOf('>', lt) + 1;
      continue;
    }
    const nameMatch = /^<([a-zA-Z][a-zA-Z0-9-]*)/.exec(html.slice(lt));
    if (nameMatch === null) {
      i = lt + 1;
      continue;
    }
    const name = (nameMatch[1] as string).toLowerCase();
    let j = lt + nameMatch[0].length;
    const attributes: Record<string, string> = {};
    const attribute = /\s*([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/y;
    while (j < html.length && html[j] !== '>' && !html.startsWith('/>', j)) {
      attribute.lastIndex = j;
      const m = attribute.exec(html);
      if (m === null) {
        j++;
        continue;
      }
      attributes[(m[1] as string).toLowerCase()] = decode(m[2] ?? m[3] ?? m[4] ?? '');
      j = attribute.lastIndex;
    }
    const end = html.indexOf('>', j) + 1;
    const tag: HtmlTag = { name, attributes };
    if (name === 'script' || name === 'style') {
      const close = html.indexOf(`</${name}`, end);
      tag.text = html.slice(end, close < 0 ? html.length : close);
      i = close < 0 ? html.length : close;
    } else {
      i = end;
    }
    tags.push(tag);
  }
  return tags;
}

function decode(value: string): string {
  return value
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}

/** What a page must not have under the console's CSP: inline script, inline style, event-handler attributes. */
export function inlineCode(html: string): string[] {
  const found: string[] = [];
  for (const tag of htmlTags(html)) {
    if (tag.name === 'script' && (tag.attributes.src === undefined || (tag.text ?? '').trim() !== '')) {
      found.push('an inline <script>');
    }
    if (tag.name === 'style') found.push('a <style> element');
    for (const attribute of Object.keys(tag.attributes)) {
      if (attribute === 'style') found.push(`a style attribute on <${tag.name}>`);
      if (attribute.startsWith('on')) found.push(`an ${attribute} attribute on <${tag.name}>`);
      if (attribute.startsWith('hx-on')) found.push(`an ${attribute} attribute on <${tag.name}>`);
    }
    if (tag.name === 'a' && /^\s*javascript:/i.test(tag.attributes.href ?? ''))
      found.push('a javascript: link');
  }
  return found;
}
