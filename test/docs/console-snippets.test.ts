/** The console guide's sample (docs/snippets/console/): the project file loads and serves the console. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadInterlockConfig } from '../../src/config/load.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { ROOT } from '../cli/helpers.js';
import { postForm } from '../gateway/console-helpers.js';

const OPS_KEY = 'an-operator-key-from-the-environment';

describe('console snippets', () => {
  it('interlock.config.yaml: serves the console at /console, and only the operator signs in', async () => {
    const config = await loadInterlockConfig({
      file: 'interlock.config.yaml',
      cwd: join(ROOT, 'docs/snippets/console'),
      env: { OPS_KEY, CI_GATEWAY_KEY: 'a-ci-key-from-the-environment-0123' },
    });
    const manager = new MCPClientManager({ capabilities: CapabilitySet.fromPolicy(config.policy) });
    await using gateway = new Gateway({ manager, config: config.gateway });
    const { console: consoleUrl } = await gateway.listen({ port: 0 });
    expect(consoleUrl?.pathname).toBe('/console');
    const signin = new URL('/console/signin', consoleUrl);
    expect((await postForm(signin, { credential: 'a-ci-key-from-the-environment-0123' })).status).toBe(403);
    expect((await postForm(signin, { credential: OPS_KEY })).status).toBe(303);
    await manager.close();
  });
});
