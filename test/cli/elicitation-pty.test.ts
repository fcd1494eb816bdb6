/**
 * `interlock call` as a real process on a real pseudo-terminal (util-linux `script`), answering a server's
 * question typed on the terminal: the same path a user at a shell takes, with no injected streams.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../helpers/fixtures.js';
import { CLI, ROOT, type TempProject, tempProject } from './helpers.js';

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

let project: TempProject;
beforeAll(() => {
  project = tempProject();
  project.write('interlock.config.yaml', {
    mcpServers: { srv: { command: process.execPath, args: [fixture('modern')] } },
    policy: {
      version: 1,
      rules: [
        { effect: 'allow', resource: 'mcp:srv:*', actions: 'execute' },
        { effect: 'allow', resource: 'mcp:srv:elicitation', actions: 'request' },
      ],
    },
  });
});
afterAll(() => project.close());

/** Runs the CLI under `script`, typing `input` on its terminal; resolves with everything the terminal showed. */
function onTerminal(args: string[], input: string): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, '--import', TSX, CLI, ...args].map((a) => `'${a}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    cwd: project.dir,
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let screen = '';
  child.stdout.on('data', (chunk: Buffer) => {
    screen += chunk.toString();
  });
  // The terminal buffers what is typed until the CLI reads it, line by line.
  child.stdin.end(input);
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, screen })));
}

describe.skipIf(!hasScript)('interlock call on a pseudo-terminal (needs util-linux script)', () => {
  it('asks the question on the terminal and sends what was typed, with the default filled in', async () => {
    const { code, screen } = await onTerminal(['call', 'mcp__srv__ask'], 'y\nAda\n\n');
    expect(code).toBe(0);
    expect(screen).toContain("server 'srv' asks: Who are you?");
    expect(screen).toContain('name (string; required):');
    expect(screen).toContain('{"kind":"elicit","action":"accept","content":{"name":"Ada","color":"blue"}}');
  });
});
