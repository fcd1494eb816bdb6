/**
 * Issue 39: a denial's hint knows where the deciding policy came from. After `interlock policy revoke echo` the rule
 * is still in the project file, so the fix is `interlock policy publish`, not "add this rule to the file".
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fixture, readFixtureLog } from '../helpers/fixtures.js';
import { redisForFile } from '../helpers/redis.js';
import { runCli, tempProject } from './helpers.js';

const redis = redisForFile();
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('hints under a shared policy', () => {
  it('after a revoke, says to publish the file again; for a rule no policy has, to add it and publish', async () => {
    const project = tempProject();
    cleanups.push(() => project.close());
    project.write('interlock.config.yaml', {
      mcpServers: {
        echo: { command: process.execPath, args: [fixture('echo')], env: { FIXTURE_LOG: project.log } },
      },
      policy: {
        version: 1,
        rules: [{ id: 'echo', effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] }],
      },
      state: { redis: { url: redis.current.url, keyPrefix: 'policy-hints:' }, policy: { name: 'team' } },
    });
    const revoked = await runCli(['policy', 'revoke', 'echo'], { cwd: project.dir });
    expect(revoked.code).toBe(0);

    const call = await runCli(['call', 'mcp__echo__echo', '--args', '{"text":"hi"}'], { cwd: project.dir });
    expect(call.code).toBe(3);
    expect(call.stderr).toContain(
      "hint: interlock.config.yaml has a rule that allows it, but the shared policy 'team' (version 2) does not (it was revoked): to allow it, publish the file's policy to the fleet: interlock policy publish",
    );
    expect(call.stderr).not.toContain('add this rule');
    expect(readFixtureLog(project.log).filter((e) => e.method === 'tools/call')).toEqual([]);

    const check = await runCli(['check', 'mcp__echo__add'], { cwd: project.dir });
    expect(check.stdout + check.stderr).toContain('add this rule to policy.rules in interlock.config.yaml');
    expect(check.stdout + check.stderr).toContain(
      "then publish it, since this project decides with the shared policy 'team' (version 2): interlock policy publish",
    );
  });
});
