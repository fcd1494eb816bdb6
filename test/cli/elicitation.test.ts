/**
 * `interlock call` answering a server's questions: field by field on a terminal (stdin injected as a TTY, the
 * way in-process.test.ts drives approval prompts), the URL of a URL-mode request shown in full and opened
 * only after a yes, and a clear decline on stderr when there is no terminal. The policy of the project file
 * decides first. The server is the 2026-07-28 fixture, asking through `input_required`.
 */
import { chmodSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { fixture } from '../helpers/fixtures.js';
import { CONDITION_TIMEOUT_MS } from '../helpers/wait.js';
import { type TempProject, tempProject } from './helpers.js';

let project: TempProject;

beforeAll(() => {
  project = tempProject();
  project.write('interlock.config.yaml', {
    mcpServers: { srv: { command: process.execPath, args: [fixture('modern')] } },
    policy: {
      version: 1,
      rules: [
        { id: 'tools', effect: 'allow', resource: 'mcp:srv:*', actions: 'execute' },
        {
          id: 'forms',
          effect: 'allow',
          resource: 'mcp:srv:elicitation',
          actions: 'request',
          when: { args: { mode: { equals: 'form' } } },
        },
        {
          id: 'known-sites',
          effect: 'allow',
          resource: 'mcp:srv:elicitation',
          actions: 'request',
          when: { args: { host: { oneOf: ['auth.example.com', 'xn--pple-43d.com'] } } },
        },
      ],
    },
  });
});

afterAll(() => project.close());

async function run(args: string[], options: { tty: boolean; stdin: string; env?: Record<string, string> }) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: { write: (c: string) => (stdout += c), isTTY: options.tty, columns: 120 },
    stderr: { write: (c: string) => (stderr += c), isTTY: options.tty, columns: 120 },
    stdin: Object.assign(Readable.from([options.stdin]), { isTTY: options.tty }),
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    cwd: project.dir,
  });
  return { code, stdout, stderr };
}

describe('interlock call: elicitation on a terminal', () => {
  it('asks each field with its type and default, and leaves an empty answer to the default', async () => {
    const result = await run(['call', 'mcp__srv__ask'], { tty: true, stdin: 'y\nAda\n\n' });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      kind: 'elicit',
      action: 'accept',
      content: { name: 'Ada', color: 'blue' },
    });
    expect(result.stderr).toContain("server 'srv' asks: Who are you?");
    expect(result.stderr).toContain('name (string; required): ');
    expect(result.stderr).toContain('color (string; default "blue"): ');
  });

  it('offers the options of every enum form by number or value, and asks again after an answer that does not fit', async () => {
    const result = await run(['call', 'mcp__srv__ask_choices'], {
      tty: true,
      stdin: 'y\n1\n\nwhite\npizza\nthin\n',
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).content).toEqual({
      size: 's',
      toppings: ['olive'],
      sauces: ['white'],
      crust: 'thin',
    });
    expect(result.stderr).toContain('Size (one of: 1=Small (s), 2=Medium (m); default "m")');
    expect(result.stderr).toContain('Toppings (one or more, comma-separated: 1=Ham (ham), 2=Olives (olive)');
    expect(result.stderr).toContain('answer one of the options (its number or value)');
  });

  it('declines when the user says no, and cancels when the input ends', async () => {
    const no = await run(['call', 'mcp__srv__ask'], { tty: true, stdin: 'n\n' });
    expect(JSON.parse(no.stdout)).toEqual({ kind: 'elicit', action: 'decline' });
    const ended = await run(['call', 'mcp__srv__ask'], { tty: true, stdin: 'y\n' });
    expect(JSON.parse(ended.stdout)).toEqual({ kind: 'elicit', action: 'cancel' });
  });

  it('shows a URL in full with its host, and opens it in the browser only after a yes', async () => {
    const opened = join(project.dir, 'opened.txt');
    const browser = project.write('browser.sh', `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
    chmodSync(browser, 0o755);
    const url = 'https://auth.example.com/connect?state=xyz';
    const result = await run(['call', 'mcp__srv__ask_url', '--args', JSON.stringify({ url })], {
      tty: true,
      stdin: 'y\n',
      env: { BROWSER: browser },
    });
    expect(JSON.parse(result.stdout)).toEqual({ kind: 'elicit', action: 'accept' });
    expect(result.stderr).toContain(`URL:  ${url}`);
    expect(result.stderr).toContain('host: auth.example.com');
    await vi.waitFor(() => expect(existsSync(opened) && readFileSync(opened, 'utf8')).toBe(url), {
      timeout: CONDITION_TIMEOUT_MS,
    });
  });

  it('warns about a punycode host, and opens nothing on a no', async () => {
    const result = await run(
      ['call', 'mcp__srv__ask_url', '--args', JSON.stringify({ url: 'https://xn--pple-43d.com/login' })],
      { tty: true, stdin: 'n\n', env: { BROWSER: '/nonexistent/browser' } },
    );
    expect(JSON.parse(result.stdout)).toEqual({ kind: 'elicit', action: 'decline' });
    expect(result.stderr).toContain("warning: the host is punycode; it reads as 'аpple.com'");
    expect(result.stderr).not.toContain('Could not run');
  });
});

describe('interlock call: elicitation without a terminal', () => {
  it('declines, and says on stderr that it declined and why', async () => {
    const result = await run(['call', 'mcp__srv__ask'], { tty: false, stdin: 'y\nAda\n' });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ kind: 'elicit', action: 'decline' });
    expect(result.stderr).toContain(
      `interlock: declined the question server 'srv' asked ("Who are you?"): stdin or stderr is not a terminal, so there is nobody to ask.`,
    );
  });

  it('declines with --json even on a terminal: stdout stays one JSON document', async () => {
    const result = await run(['call', 'mcp__srv__ask', '--json'], { tty: true, stdin: 'y\nAda\n' });
    expect(JSON.parse(JSON.parse(result.stdout).text)).toEqual({ kind: 'elicit', action: 'decline' });
    expect(result.stderr).toContain(
      `interlock: declined the question server 'srv' asked ("Who are you?"): answers are not asked for with --json.`,
    );
  });

  it('declines a URL outside the policy without asking, even on a terminal', async () => {
    const result = await run(
      ['call', 'mcp__srv__ask_url', '--args', JSON.stringify({ url: 'https://evil.test/' })],
      { tty: true, stdin: 'y\n' },
    );
    expect(JSON.parse(result.stdout)).toEqual({ kind: 'elicit', action: 'decline' });
    expect(result.stderr).not.toContain('evil.test');
  });
});
