/** The fleet guide's sample (docs/snippets/fleet/) against a real redis-server on a loopback port. */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as engineState from '../../docs/snippets/fleet/engine-state.js';
import * as leasedQuota from '../../docs/snippets/fleet/leased-quota.js';
import * as pinsAndTokens from '../../docs/snippets/fleet/pins-and-tokens.js';
import * as sharedState from '../../docs/snippets/fleet/shared-state.js';
import { redisForFile } from '../helpers/redis.js';

const redisServer = redisForFile();

describe('fleet snippets', () => {
  it('shared-state: a quota unit, a broadcast heard, a decision in the stream', async () => {
    await expect(sharedState.main(redisServer.current.url)).resolves.toEqual({
      allowed: true,
      used: 1,
      message: 'revision 42',
      logged: 1,
    });
  });

  it('leased-quota: 120 calls under a quota of 100 with leased units: exactly 100 are allowed', async () => {
    await expect(leasedQuota.main(redisServer.current.url)).resolves.toEqual({ allowed: 100 });
  });

  it('engine-state: an agent decides with the shared policy version', async () => {
    await expect(engineState.main(redisServer.current.url)).resolves.toEqual({
      decidedBy: 'team@1',
      published: 1,
    });
  });

  it('pins-and-tokens: a pin set in one process is seen by another', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'interlock-pins-doc-'));
    try {
      await expect(pinsAndTokens.main(redisServer.current.url, join(dir, 'pins.json'))).resolves.toEqual({
        seenElsewhere: true,
        blocked: [],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
