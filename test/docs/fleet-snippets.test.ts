/** The fleet guide's sample (docs/snippets/fleet/) against a real redis-server on a loopback port. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as sharedState from '../../docs/snippets/fleet/shared-state.js';
import { type RedisServer, startRedis } from '../helpers/redis.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.close();
});

describe('fleet snippets', () => {
  it('shared-state: a quota unit, a broadcast heard, a decision in the stream', async () => {
    await expect(sharedState.main(redis.url)).resolves.toEqual({
      allowed: true,
      used: 1,
      message: 'revision 42',
      logged: 1,
    });
  });
});
