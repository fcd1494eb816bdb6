import { describe, expect, it } from 'vitest';
import { createStateSealer } from '../../src/gateway/state-seal.js';

const KEY = 'k'.repeat(32);
const payload = {
  id: 'call-1',
  binding: 'alice|echo',
  upstream: { requestState: 'upstream-secret-state-42' },
};

describe('the sealed state a caller echoes', () => {
  it('opens what it sealed, on any sealer with the same key (another replica)', async () => {
    const state = await createStateSealer<typeof payload>(KEY, 60).mint(payload);
    await expect(createStateSealer<typeof payload>(KEY, 60).verify(state)).resolves.toEqual(payload);
  });

  it('hides what is inside from the caller', async () => {
    const state = await createStateSealer<typeof payload>(KEY, 60).mint(payload);
    const visible = state
      .split('.')
      .map((part) => Buffer.from(part, 'base64url').toString('latin1'))
      .join(' ');
    expect(state).not.toContain('upstream-secret-state-42');
    expect(visible).not.toContain('upstream-secret-state-42');
    expect(visible).not.toContain('alice');
    // Two seals of the same payload differ (a fresh nonce each time).
    expect(await createStateSealer<typeof payload>(KEY, 60).mint(payload)).not.toBe(state);
  });

  it('refuses a state that was altered, sealed under another key, or is not one at all', async () => {
    const sealer = createStateSealer<typeof payload>(KEY, 60);
    const state = await sealer.mint(payload);
    const parts = state.split('.');
    const body = Buffer.from(parts[2] as string, 'base64url');
    body[0] = (body[0] as number) ^ 1;
    const altered = [parts[0], parts[1], body.toString('base64url'), parts[3]].join('.');
    await expect(sealer.verify(altered)).rejects.toThrow();
    await expect(createStateSealer<typeof payload>('x'.repeat(32), 60).verify(state)).rejects.toThrow();
    await expect(sealer.verify('v1.abc')).rejects.toThrow('not a sealed gateway state');
    await expect(sealer.verify(`v2.${parts.slice(1).join('.')}`)).rejects.toThrow(
      'not a sealed gateway state',
    );
  });

  it('refuses a state past its expiry', async () => {
    let now = 1_000_000;
    const sealer = createStateSealer<typeof payload>(KEY, 60, () => now);
    const state = await sealer.mint(payload);
    now += 59_000;
    await expect(sealer.verify(state)).resolves.toEqual(payload);
    now += 2_000;
    await expect(sealer.verify(state)).rejects.toThrow('expired');
  });
});
