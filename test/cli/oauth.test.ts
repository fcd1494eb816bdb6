/**
 * A project-file server behind OAuth, through the CLI as a process: the client-credentials grant gets a token,
 * the call goes through, the token state lands in a 0600 file beside the pins, and no secret is printed.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OAuthFixture } from '../remote/oauth-fixture.js';
import { runCli, type TempProject, tempProject } from './helpers.js';

let project: TempProject | undefined;
let fixture: OAuthFixture | undefined;
afterEach(async () => {
  project?.close();
  project = undefined;
  await fixture?.[Symbol.asyncDispose]();
  fixture = undefined;
});

describe('interlock call on an OAuth-protected server', () => {
  it('authenticates with client credentials, stores the token state 0600, and prints no secret', async () => {
    fixture = await OAuthFixture.start();
    const url = await fixture.startResource();
    fixture.register({
      client_id: 'svc',
      client_secret: 'cli-s3cret-value',
      token_endpoint_auth_method: 'client_secret_post',
      redirect_uris: [],
    });
    project = tempProject();
    project.write('interlock.config.yaml', {
      mcpServers: {
        remote: {
          type: 'http',
          url,
          auth: {
            type: 'oauth',
            grant: 'client_credentials',
            clientId: 'svc',
            clientSecret: '${SVC_SECRET}',
            tokenEndpointAuthMethod: 'client_secret_post',
          },
        },
      },
      policy: { version: 1, rules: [{ effect: 'allow', resource: 'mcp:remote:whoami', actions: 'execute' }] },
    });
    const result = await runCli(['call', 'mcp__remote__whoami'], {
      cwd: project.dir,
      env: { SVC_SECRET: 'cli-s3cret-value' },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('client=svc');
    expect(`${result.stdout}${result.stderr}`).not.toContain('cli-s3cret-value');
    const tokens = join(project.dir, '.interlock', 'tokens.json');
    expect(statSync(tokens).mode & 0o777).toBe(0o600);
  });
});
