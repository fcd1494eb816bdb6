/** The gateway replicas guide's sample (docs/snippets/gateway/replicas.config.yaml) loads, its key stays secret. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GatewayConfigSchema } from '../../src/config/gateway.js';
import { loadInterlockConfig } from '../../src/config/load.js';
import { ROOT } from '../cli/helpers.js';

const SNIPPETS = join(ROOT, 'docs/snippets/gateway');
const KEY = 'a-state-key-from-the-environment-0123456789';

describe('gateway replicas snippet', () => {
  it('replicas.config.yaml: loads with its key from the environment, which is kept as a secret', async () => {
    const config = await loadInterlockConfig({
      file: 'replicas.config.yaml',
      cwd: SNIPPETS,
      env: {
        REDIS_URL: 'redis://127.0.0.1:6379',
        CI_GATEWAY_KEY: 'a-ci-key-from-the-environment-0123',
        GATEWAY_STATE_KEY: KEY,
      },
    });
    const gateway = GatewayConfigSchema.parse(config.gateway);
    expect(gateway.replicas).toEqual({ stateKey: KEY, ackTimeoutMs: 2_000, routeTimeoutMs: 300_000 });
    expect(config.secrets).toContain(KEY);
    expect(config.state?.redis).toMatchObject({ url: 'redis://127.0.0.1:6379' });
  });

  it('refuses a state key shorter than 32 bytes, saying how to make one', async () => {
    const parsed = GatewayConfigSchema.safeParse({ replicas: { stateKey: 'too-short' } });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toMatch(/at least 32 bytes.*openssl rand/);
  });
});
