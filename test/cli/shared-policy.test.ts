// A policy shared through Redis (state.policy, issues 16, 17 and 38): once `interlock policy revoke` printed its
// line in one process, a running `interlock serve` gateway refuses its very next call, and `publish` brings it back.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { fixture } from '../helpers/fixtures.js';
import { redisForFile } from '../helpers/redis.js';
import { json, runCli, startCli, tempProject } from './helpers.js';

const redis = redisForFile();
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('interlock policy with state.policy', () => {
  it('revokes a rule for a running gateway, and publishes the file again', async () => {
    const project = tempProject();
    cleanups.push(() => project.close());
    const file = project.write('interlock.config.yaml', {
      mcpServers: { echo: { command: process.execPath, args: [fixture('echo')] } },
      policy: {
        version: 1,
        rules: [{ id: 'echo', effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] }],
      },
      state: { redis: { url: redis.current.url, keyPrefix: 'policy-cli:' }, policy: { name: 'team' } },
    });
    const gateway = startCli(['--config', file, 'serve', '--http', '--port', '0'], { cwd: project.dir });
    cleanups.push(async () => {
      if (gateway.child.exitCode === null) gateway.child.kill('SIGTERM');
      await gateway.done;
    });
    await gateway.waitFor(/listening on (\S+)/);
    const url = new URL(/listening on (\S+)/.exec(gateway.stdout())?.[1] ?? '');
    const client = new Client({ name: 'policy-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url));
    cleanups.push(() => client.close());
    // A tool the caller may no longer see answers as unknown (issue 38): as a failed call here.
    const echo = () =>
      client.callTool({ name: 'mcp__echo__echo', arguments: { text: 'hi' } }).catch((err: Error) => {
        if (!err.message.includes('Unknown tool')) throw err;
        return { isError: true, content: [{ type: 'text', text: err.message }] };
      });
    expect((await echo()).isError).toBeFalsy();

    const status = json<{ policy: string; version: number }>(
      await runCli(['--config', file, '--json', 'policy'], { cwd: project.dir }),
    );
    expect(status).toMatchObject({ policy: 'team', version: 1 });

    const revoked = await runCli(['--config', file, 'policy', 'revoke', 'echo'], { cwd: project.dir });
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain("policy 'team' is at version 2 (0 rules)");
    // The command returned once the gateway applied version 2 (issue 38): its very next call is refused.
    const refused = await echo();
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('Unknown tool: mcp__echo__echo');

    const published = await runCli(['--config', file, 'policy', 'publish'], { cwd: project.dir });
    expect(published.stdout).toContain("policy 'team' is at version 3 (1 rule)");
    expect((await echo()).isError).toBeFalsy();
  });

  it('does not publish a policy whose tests fail, and publishes it once they pass', async () => {
    const project = tempProject();
    cleanups.push(() => project.close());
    const file = project.write('interlock.config.yaml', {
      mcpServers: {},
      policy: {
        version: 1,
        rules: [{ id: 'echo', effect: 'allow', resource: 'mcp:echo:*', actions: ['execute'] }],
      },
      state: {
        redis: { url: redis.current.url, keyPrefix: 'policy-tests-cli:' },
        policy: { name: 'tested' },
      },
    });
    const cases = (expectFail: 'deny' | 'allow') => ({
      version: 1,
      cases: [
        { name: 'echo is allowed', tool: 'mcp__echo__echo', expect: 'allow', rule: 'echo' },
        { name: 'the shell is not', tool: 'mcp__echo__shell', expect: expectFail },
      ],
    });
    // The policy's `mcp:echo:*` also allows `shell`: the case that says it must not fails.
    project.write('interlock.policy-tests.yaml', cases('deny'));
    const refused = await runCli(['--config', file, 'policy', 'publish'], { cwd: project.dir });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain("Policy 'tested' was not published: 1 of 2 policy tests in");
    expect(refused.stderr).toContain("failed ('the shell is not')");
    expect(refused.stderr).toContain("hint: run 'interlock policy test' to see each failure");
    // Nothing reached the fleet: the shared policy is still the file's first publication (version 1).
    const status = json<{ version: number }>(
      await runCli(['--config', file, '--json', 'policy'], { cwd: project.dir }),
    );
    expect(status.version).toBe(1);

    project.write('interlock.policy-tests.yaml', cases('allow'));
    const published = await runCli(['--config', file, 'policy', 'publish'], { cwd: project.dir });
    expect(published.code).toBe(0);
    expect(published.stdout).toContain('policy tests: 2 passed');
    expect(published.stdout).toContain("policy 'tested' is at version 2 (1 rule)");
  });

  it('says what to add when the file shares no policy', async () => {
    const project = tempProject();
    cleanups.push(() => project.close());
    const file = project.write('interlock.config.yaml', {
      mcpServers: {},
      policy: { version: 1, rules: [] },
    });
    const result = await runCli(['--config', file, 'policy', 'revoke', 'x'], { cwd: project.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('state.policy');
  });
});
