/** The fleet guide's sample (docs/snippets/fleet/) against a real redis-server on a loopback port. */
import { describe, expect, it } from 'vitest';
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
});
