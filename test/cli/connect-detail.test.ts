/**
 * Issue 39: a server nothing listens for is reported by what the user can act on (nothing is listening at
 * host:port); the protocol step that noticed it (version negotiation, fetch) is printed only with --verbose.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.js';
import { runCli, type TempProject, tempProject } from './helpers.js';

let project: TempProject | undefined;

afterAll(() => project?.close());

describe('interlock servers, a server nothing listens for', () => {
  it('leads with "nothing is listening at host:port" and prints the protocol detail only with --verbose', async () => {
    const port = await freePort();
    project = tempProject();
    project.write('interlock.config.yaml', {
      servers: { weather: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } },
    });
    const plain = await runCli(['servers'], { cwd: project.dir });
    expect(plain.code).toBe(1);
    expect(plain.stdout).toContain(
      `Server 'weather' failed to connect: nothing is listening at 127.0.0.1:${port} (connection refused)`,
    );
    expect(plain.stdout + plain.stderr).not.toMatch(/Version negotiation|fetch failed|detail:/);

    const verbose = await runCli(['servers', '--verbose'], { cwd: project.dir });
    expect(verbose.code).toBe(1);
    expect(verbose.stderr).toMatch(/ {2}detail: .*fetch failed/);
    expect(verbose.stderr).toMatch(/ {2}detail: .*ECONNREFUSED/);
  });
});
