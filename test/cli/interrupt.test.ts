/**
 * Ctrl-C (SIGINT) in the middle of a command: the CLI closes every server it started and exits 130, leaving
 * no process behind, even while one server still hangs in its handshake.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fixture, readFixtureLog } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/wait.js';
import { allGone, json, startCli, type TempProject, tempProject } from './helpers.js';

let project: TempProject | undefined;

afterEach(() => {
  project?.close();
  project = undefined;
});

function hangingProject(): TempProject {
  const p = tempProject();
  p.write('interlock.config.yaml', {
    mcpServers: {
      echo: { command: process.execPath, args: [fixture('echo')], env: { FIXTURE_LOG: p.log } },
      // Never answers initialize: its connect only ends with connectTimeoutMs, or with Ctrl-C.
      hang: {
        command: process.execPath,
        args: [fixture('hang-initialize')],
        env: { FIXTURE_LOG: p.log },
        connectTimeoutMs: 120_000,
      },
    },
    policy: { version: 1, rules: [{ effect: 'allow', resource: 'mcp:echo:slow', actions: 'execute' }] },
  });
  return p;
}

/** Waits until both fixture servers run (each logs its pid with the first message it receives). */
async function bothServersRunning(p: TempProject): Promise<number[]> {
  await waitUntil(() => p.fixturePids().length === 2, {
    timeoutMs: 30_000,
    intervalMs: 50,
    message: 'both servers did not start',
  });
  return p.fixturePids();
}

describe('Ctrl-C', () => {
  it('in the middle of `servers`: closes every server, says so, exits 130', async () => {
    project = hangingProject();
    const cli = startCli(['servers'], { cwd: project.dir });
    await cli.waitFor(/echo \(stdio\): connected/);
    await cli.waitFor(/hang \(stdio\): connecting/);
    const pids = await bothServersRunning(project);
    cli.child.kill('SIGINT');
    const result = await cli.done;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('interrupted');
    expect(result.stdout).not.toContain('NAME'); // no table: the command did not finish
    expect(await allGone([...pids, ...result.descendants])).toEqual([]);
  });

  it('with --json: the error document says INTERRUPTED', async () => {
    project = hangingProject();
    const cli = startCli(['servers', '--json'], { cwd: project.dir });
    const pids = await bothServersRunning(project);
    cli.child.kill('SIGINT');
    const result = await cli.done;
    expect(result.code).toBe(130);
    expect(json(result)).toEqual({ error: { code: 'INTERRUPTED', message: 'Interrupted.', exitCode: 130 } });
    expect(await allGone([...pids, ...result.descendants])).toEqual([]);
  });

  it('during a long tool call: cancels it and exits 130', async () => {
    project = tempProject();
    const p = project;
    p.write('interlock.config.yaml', {
      mcpServers: {
        echo: { command: process.execPath, args: [fixture('echo')], env: { FIXTURE_LOG: p.log } },
      },
      policy: { version: 1, rules: [{ effect: 'allow', resource: 'mcp:echo:slow', actions: 'execute' }] },
    });
    const cli = startCli(['call', 'mcp__echo__slow', '--args', '{"ms":120000}'], { cwd: p.dir });
    await waitUntil(() => readFixtureLog(p.log).some((e) => e.method === 'tools/call'), {
      timeoutMs: 30_000,
      intervalMs: 50,
      message: 'the slow call did not arrive',
    });
    cli.child.kill('SIGINT');
    const result = await cli.done;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('interrupted');
    expect(await allGone([...p.fixturePids(), ...result.descendants])).toEqual([]);
  });
});
