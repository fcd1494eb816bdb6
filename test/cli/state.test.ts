/**
 * The project file's `state` section through the CLI as real processes: a maxCalls quota counted in a real
 * redis-server holds across separate `interlock call` runs, and an unreachable Redis is a clear error.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { fixture } from '../helpers/fixtures.js';
import { redisForFile } from '../helpers/redis.js';
import { runCli, type TempProject, tempProject } from './helpers.js';

const redisServer = redisForFile();
const projects: TempProject[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.close();
});

function project(
  options: { keyPrefix?: string; descriptionSuffix?: string; quotaLease?: object } = {},
): TempProject {
  const p = tempProject();
  projects.push(p);
  const env = { FIXTURE_LOG: p.log, FIXTURE_DESCRIPTION_SUFFIX: options.descriptionSuffix ?? '' };
  p.write('interlock.config.yaml', {
    mcpServers: { echo: { command: process.execPath, args: [fixture('echo')], env } },
    state: {
      redis: { url: '${REDIS_URL}', keyPrefix: options.keyPrefix ?? 'cli-test:' },
      ...(options.quotaLease === undefined ? {} : { quotaLease: options.quotaLease }),
    },
    policy: {
      version: 1,
      rules: [
        {
          id: 'echo-twice',
          effect: 'allow',
          resource: 'mcp:echo:echo',
          actions: 'execute',
          maxCalls: 2,
          per: '1h',
        },
      ],
    },
    audit: { file: 'audit.jsonl' },
  });
  return p;
}

describe('state: { redis } in the project file', () => {
  it('counts a quota across separate CLI runs: the third call in a new process is denied', async () => {
    const p = project();
    const env = { REDIS_URL: redisServer.current.url };
    const args = ['call', 'mcp__echo__echo', '--args', '{"text":"hi"}'];
    const first = await runCli(args, { cwd: p.dir, env });
    const second = await runCli(args, { cwd: p.dir, env });
    const third = await runCli(args, { cwd: p.dir, env });
    expect([first.code, second.code, third.code]).toEqual([0, 0, 3]);
    expect(third.stderr + third.stdout).toMatch(
      /quota of 2 calls per 1h, shared by every process, is used up/,
    );
    const records = readFileSync(`${p.dir}/audit.jsonl`, 'utf8').trim().split('\n');
    expect(records).toHaveLength(3);
  });

  it('with leased units, each run gives back what it leased ahead of need: separate runs still get both calls', async () => {
    // Idle return is off (far longer than a run): what a run leased and did not spend goes back when it exits.
    const p = project({ keyPrefix: 'cli-lease:', quotaLease: { maxBlock: 8, idleMs: 600_000 } });
    const env = { REDIS_URL: redisServer.current.url };
    const args = ['call', 'mcp__echo__echo', '--args', '{"text":"hi"}'];
    const codes: (number | null)[] = [];
    for (let i = 0; i < 3; i++) codes.push((await runCli(args, { cwd: p.dir, env })).code);
    expect(codes).toEqual([0, 0, 3]);
  }, 120_000);

  it('shares pins between projects on two hosts: a definition pinned in one is blocked in the other until approved', async () => {
    const env = { REDIS_URL: redisServer.current.url };
    const a = project({ keyPrefix: 'cli-pins:' });
    // The other host's server lists a different definition of the same tool, and B has no pin file of its own.
    const b = project({ keyPrefix: 'cli-pins:', descriptionSuffix: ' (changed)' });
    const call = (p: TempProject) =>
      runCli(['call', 'mcp__echo__echo', '--args', '{"text":"hi"}'], { cwd: p.dir, env });
    expect((await call(a)).code).toBe(0);
    const blocked = await call(b);
    expect(blocked.code).toBe(3);
    expect(blocked.stderr).toContain('blocked:');

    const listed = await runCli(['pins', '--json'], { cwd: b.dir, env });
    const change = (
      JSON.parse(listed.stdout) as { pins: { name: string; state: string; currentHash: string }[] }
    ).pins.find((p) => p.name === 'mcp__echo__echo');
    expect(change?.state).toBe('changed');
    const approved = await runCli(
      ['pins', '--approve', 'mcp__echo__echo', '--hash', change?.currentHash ?? ''],
      { cwd: b.dir, env },
    );
    expect(approved.code).toBe(0);
    expect((await call(b)).code).toBe(0);
    // The approval is the fleet's pin now: the first host's old definition is the changed one there.
    expect((await call(a)).code).toBe(3);
    // Six CLI processes in a row: a bound for a busy machine, not a timing claim.
  }, 180_000);

  it('reports an unreachable Redis clearly, with exit code 1', async () => {
    const p = project();
    const result = await runCli(['call', 'mcp__echo__echo', '--args', '{"text":"hi"}'], {
      cwd: p.dir,
      env: { REDIS_URL: 'redis://127.0.0.1:1' },
    });
    expect(result.code).toBe(1);
    // Issue 39: a URL from a variable that is only scheme, host and port says where; one period at the end.
    expect(result.stderr).toMatch(/error: Cannot reach Redis at redis:\/\/127\.0\.0\.1:1: [^\n]*[^.]\.\n/);
    expect(result.stderr).not.toContain('***');
  });

  it('reports an unreachable Redis with its username and password masked, and nothing else', async () => {
    const p = project();
    const result = await runCli(['call', 'mcp__echo__echo', '--args', '{"text":"hi"}'], {
      cwd: p.dir,
      env: { REDIS_URL: 'redis://fleet-user:hunter2-pass@127.0.0.1:1/0' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Cannot reach Redis at redis://***:***@127.0.0.1:1/0: ');
    expect(result.stderr).not.toMatch(/hunter2-pass|fleet-user/);
  });
});
