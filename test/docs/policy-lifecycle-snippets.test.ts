/** The policy lifecycle guide's project file (docs/snippets/policy-lifecycle/fleet/): it loads as the guide says. */

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadInterlockConfig } from '../../src/config/load.js';
import { ROOT } from '../cli/helpers.js';

const SNIPPETS = join(ROOT, 'docs/snippets/policy-lifecycle/fleet');

describe('policy lifecycle snippets', () => {
  it('interlock.config.yaml: records decisions with a digest key from the environment, and requires a review', async () => {
    const key = 'a-recording-key-from-the-environment-0123';
    const config = await loadInterlockConfig({
      file: 'interlock.config.yaml',
      cwd: SNIPPETS,
      env: { INTERLOCK_RECORDING_KEY: key, REDIS_URL: 'redis://127.0.0.1:6379' },
    });
    expect(config.recording).toMatchObject({
      file: join(SNIPPETS, '.interlock/recording.jsonl'),
      keep: [{ resource: 'mcp:notes:*', args: ['id'] }],
      digestKey: key,
    });
    // The key is a secret: everything the CLI prints is masked with it.
    expect(config.secrets).toContain(key);
    expect(config.state?.policy?.requireReview).toBe(true);
  });

  it('refuses a digest key too short to resist guessing', async () => {
    await expect(
      loadInterlockConfig({
        file: 'interlock.config.yaml',
        cwd: SNIPPETS,
        env: { INTERLOCK_RECORDING_KEY: 'short', REDIS_URL: 'redis://127.0.0.1:6379' },
      }),
    ).rejects.toThrow(/audit\.record\.digestKey/);
  });
});
