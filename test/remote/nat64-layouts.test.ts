/**
 * Issue 38, bypass 2: cloud metadata through a NAT64 prefix. A network may carve a network-specific prefix of any
 * RFC 6052 length (/32, /40, /48, /56, /64, /96) from the NAT64 block, the local-use `64:ff9b:1::/48` (RFC 8215)
 * among them, so the IPv4 address may sit in any of the six layouts. Under the default network policy each one
 * carrying the metadata service or a link-local address is refused before a socket opens, in every spelling.
 */
import { describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { createHttpClient } from '../../src/net/http.js';
import { classifyAddress, NetworkGuard, type Resolver } from '../../src/net/network.js';
import { closesAfterEach, policyError } from './cleanup.js';

const track = closesAfterEach();

/** 169.254.169.254 (a9fe:a9fe) in each RFC 6052 layout; the u octet (bits 64-71) stays zero. */
const METADATA_LAYOUTS: readonly (readonly [string, string])[] = [
  ['/96 carved from the local-use /48', '64:ff9b:1::a9fe:a9fe'],
  ['/96 with a subnet of the local-use /48', '64:ff9b:1:abcd::a9fe:a9fe'],
  ['/64 of the local-use /48', '64:ff9b:1:0:a9:fea9:fe00:0'],
  ['/56 of the local-use /48', '64:ff9b:1:a9:fe:a9fe::'],
  ['/48: the local-use prefix itself', '64:ff9b:1:a9fe:a9:fe00::'],
  ['/40 of 64:ff9b::/32', '64:ff9b:a9:fea9:fe::'],
  ['/32: 64:ff9b::/32 itself', '64:ff9b:a9fe:a9fe::'],
  ['/96: the well-known prefix', '64:ff9b::a9fe:a9fe'],
];

/** The same /96 address written every way a URL or a DNS answer may write it. */
const SPELLINGS = [
  '64:ff9b:1::a9fe:a9fe',
  '0064:ff9b:0001:0000:0000:0000:a9fe:a9fe',
  '64:ff9b:1:0:0:0:a9fe:a9fe',
  '64:ff9b:1::169.254.169.254',
  '0064:FF9B:0001::A9FE:A9FE',
  '64:FF9B:1::169.254.169.254',
];

function refusal(guard: NetworkGuard, address: string) {
  try {
    guard.checkAddress(address, address);
    return undefined;
  } catch (err) {
    return policyError(err);
  }
}

describe('NAT64 addresses that carry the metadata service (default policy)', () => {
  it.each(METADATA_LAYOUTS)('refuses the %s layout (%s) as a metadata endpoint', (_layout, address) => {
    const err = refusal(new NetworkGuard(), address);
    expect(err?.code).toBe('NETWORK_DENIED');
    expect(err?.message).toContain('169.254.169.254 is a cloud metadata endpoint');
  });

  it.each(SPELLINGS)('refuses the spelling %s in a URL before any socket opens', async (spelling) => {
    const http = track(createHttpClient({}));
    const err = await http.fetch(`http://[${spelling}]/latest/meta-data/`).catch((e: unknown) => e);
    expect(policyError(err)?.code, spelling).toBe('NETWORK_DENIED');
    expect(policyError(err)?.message).toContain('cloud metadata endpoint');
  });

  it('refuses a host name whose DNS answer is such an address', async () => {
    const resolve: Resolver = async () => [{ address: '64:ff9b:1::a9fe:a9fe', family: 6 }];
    const http = track(createHttpClient({ network: { allowPrivate: true, resolve } }));
    const err = await http.fetch('http://nat64.test/latest/meta-data/').catch((e: unknown) => e);
    expect(policyError(err)?.message).toContain('169.254.169.254 is a cloud metadata endpoint');
  });

  it('refuses a manager connecting to such a server URL', async () => {
    await using manager = new MCPClientManager();
    const err = await manager
      .connectServer({ name: 'meta', transport: 'http', url: 'http://[64:ff9b:1::a9fe:a9fe]/mcp' })
      .catch((e: unknown) => e);
    expect(policyError(err)?.code).toBe('NETWORK_DENIED');
    expect(manager.tools).toEqual([]);
  });
});

describe('NAT64 addresses that carry a link-local address', () => {
  it.each([
    ['64:ff9b:1::a9fe:101'],
    ['64:ff9b:1::169.254.1.1'],
    ['64:ff9b:1:a9fe:1:100::'],
    ['64:ff9b:1:0:a9:fe01:100:0'],
    ['64:ff9b:a9fe:101::'],
  ])('classifies %s as link-local and refuses it even with allowPrivate', (address) => {
    expect(classifyAddress(address)).toBe('link-local');
    expect(refusal(new NetworkGuard({ allowPrivate: true }), address)?.reason).toBe('link-local');
  });

  it('an allowHosts range matching one reading of an address does not allow the link-local reading', () => {
    // The /48 reading is 10.0.0.0 (allowed by the range); the /96 reading is 169.254.1.1.
    const guard = new NetworkGuard({ allowHosts: ['10.0.0.0/8'] });
    expect(refusal(guard, '64:ff9b:1:a00::a9fe:101')?.reason).toBe('link-local');
    expect(refusal(guard, '10.1.2.3')).toBeUndefined();
  });

  it('a denyHosts range matching any reading refuses the address', () => {
    const guard = new NetworkGuard({ allowPrivate: true, denyHosts: ['192.0.2.0/24'] });
    expect(refusal(guard, '64:ff9b:1::c000:201')?.reason).toBe('denied');
  });
});

describe('NAT64 addresses that stay as they were', () => {
  it.each([
    ['64:ff9b::808:808', 'public'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b:1:808:8:800::', 'private'],
    ['64:ff9b:1::808:808', 'private'],
    ['64:ff9b:1::7f00:1', 'loopback'],
    ['64:ff9b:abcd::', 'reserved'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it('a public address behind the well-known prefix is allowed, also under a strict policy', () => {
    expect(refusal(new NetworkGuard({}), '64:ff9b::808:808')).toBeUndefined();
  });
});
