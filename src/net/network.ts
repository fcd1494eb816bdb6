/**
 * SSRF guard (issue 9). A server URL, every redirect hop and every OAuth endpoint is refused when it resolves to a
 * loopback, private, link-local (cloud metadata 169.254.169.254), CGNAT or otherwise non-public address, unless the
 * manager's {@link NetworkPolicy} allows it. The check runs on the resolved addresses inside the socket connector,
 * before the socket opens, so a name that re-resolves to another address (DNS rebinding) is caught too.
 */
import type { LookupAddress, LookupAllOptions } from 'node:dns';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import type ipaddrModule from 'ipaddr.js';
import { ConnectionError, ErrorCode, InterlockError, type InterlockErrorOptions } from '../errors.js';
import { matchGlob } from '../security/pattern.js';

/** What kind of address a refused host resolved to. */
export type AddressKind =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'cgnat'
  | 'unspecified'
  | 'reserved'
  | 'multicast';

/** Why the network policy refused a host. */
export type NetworkRefusal = AddressKind | 'metadata' | 'scheme' | 'denied';

/** A DNS resolver with the shape of `dns.lookup(host, { all: true }, cb)`. Injectable for tests. */
export type Resolver = (hostname: string) => Promise<readonly LookupAddress[]>;

/** Per-manager network policy. */
export interface NetworkPolicy {
  /**
   * Allow loopback, private (RFC 1918, unique-local), CGNAT and other non-public addresses. Link-local addresses
   * (the cloud metadata service 169.254.169.254, `fe80::/10`) are never allowed by this flag: list them in
   * `allowHosts`. @default false when a `network` option is given; see {@link DEFAULT_NETWORK_POLICY}
   */
  allowPrivate?: boolean | undefined;
  /**
   * Hosts allowed whatever they resolve to: exact host names (`mcp.internal`), `*.suffix` wildcards, IP addresses
   * or CIDR ranges (`10.1.0.0/16`). This is an exception list, not an allowlist: other public hosts stay allowed.
   */
  allowHosts?: readonly string[] | undefined;
  /** Hosts always refused (same forms as `allowHosts`); deny wins over allow. */
  denyHosts?: readonly string[] | undefined;
  /** The resolver. @default `dns.lookup` with `all: true` */
  resolve?: Resolver | undefined;
}

/**
 * The policy of a manager created without a `network` option. Loopback and private addresses stay allowed so local
 * development and existing setups keep working; the cloud metadata range (link-local) is refused. Pass
 * `network: {}` (or `{ allowPrivate: false }`) to refuse private and loopback addresses too.
 */
export const DEFAULT_NETWORK_POLICY: Readonly<NetworkPolicy> = Object.freeze({ allowPrivate: true });

/** A URL or address was refused by the network policy. Code `NETWORK_DENIED`; nothing was sent. */
export class NetworkPolicyError extends InterlockError {
  /** The refused host name or address (never a URL with credentials or a query). */
  readonly host: string;
  /**
   * Why: the kind of address, `metadata` (a known cloud metadata endpoint outside the link-local range),
   * `scheme`, or `denied` (matched `denyHosts`).
   */
  readonly reason: NetworkRefusal;

  constructor(host: string, reason: NetworkRefusal, message: string, options: InterlockErrorOptions = {}) {
    super(ErrorCode.NETWORK_DENIED, message, options);
    this.host = host;
    this.reason = reason;
  }
}

// Range names of ipaddr.js (its tables follow the IANA special-purpose registries) mapped to our kinds. A range
// missing here is 'reserved': anything new or unknown fails closed under a strict policy.
const V4_KINDS: Readonly<Record<string, AddressKind>> = {
  unicast: 'public',
  unspecified: 'unspecified',
  broadcast: 'reserved',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'cgnat',
  private: 'private',
  reserved: 'reserved',
  // Anycast services that IANA lists as globally reachable.
  as112: 'public',
  amt: 'public',
};
const V6_KINDS: Readonly<Record<string, AddressKind>> = {
  unicast: 'public',
  unspecified: 'unspecified',
  linkLocal: 'link-local',
  multicast: 'multicast',
  loopback: 'loopback',
  uniqueLocal: 'private',
  deprecatedSiteLocal: 'private',
  discard: 'reserved',
  benchmarking: 'reserved',
  amt: 'public',
  as112v6: 'public',
  deprecatedOrchid: 'reserved',
  orchid2: 'reserved',
  droneRemoteIdProtocolEntityTags: 'reserved',
  segmentRouting: 'reserved',
  reserved: 'reserved',
};

declare namespace ipaddr {
  type IPv4 = ipaddrModule.IPv4;
  type IPv6 = ipaddrModule.IPv6;
}
let ipaddrLoaded: typeof ipaddrModule | undefined;
/** ipaddr.js and the ranges below, loaded at the first address checked, not at import (issue 15, import time). */
function ip(): typeof ipaddrModule {
  if (ipaddrLoaded === undefined) {
    const loaded = createRequire(import.meta.url)('ipaddr.js') as typeof ipaddrModule;
    // The global unicast block: every other IPv6 address not named above is unassigned or special.
    GLOBAL_UNICAST = loaded.parseCIDR('2000::/3');
    // IPv4-compatible addresses (`::a.b.c.d`, deprecated): judged by their IPv4 part, never as public.
    IPV4_COMPATIBLE = loaded.parseCIDR('::/96');
    // The local-use NAT64 prefix (RFC 8215): never global itself, whatever IPv4 address it carries.
    NAT64_LOCAL = loaded.parseCIDR('64:ff9b:1::/48');
    // The well-known NAT64 prefix (RFC 6052), a /96, and the /32 both prefixes sit in.
    NAT64_WELL_KNOWN = loaded.parseCIDR('64:ff9b::/96');
    NAT64_BLOCK = loaded.parseCIDR('64:ff9b::/32');
    ipaddrLoaded = loaded;
  }
  return ipaddrLoaded;
}
let GLOBAL_UNICAST: [ipaddr.IPv4 | ipaddr.IPv6, number];
let IPV4_COMPATIBLE: [ipaddr.IPv4 | ipaddr.IPv6, number];
let NAT64_LOCAL: [ipaddr.IPv4 | ipaddr.IPv6, number];
let NAT64_WELL_KNOWN: [ipaddr.IPv4 | ipaddr.IPv6, number];
let NAT64_BLOCK: [ipaddr.IPv4 | ipaddr.IPv6, number];
/** How strict each kind is: a translated address takes the stricter of its prefix's kind and its IPv4 part's. */
const SEVERITY: Readonly<Record<AddressKind, number>> = {
  public: 0,
  reserved: 1,
  multicast: 1,
  private: 2,
  cgnat: 2,
  unspecified: 3,
  loopback: 3,
  'link-local': 4,
};

function stricter(a: AddressKind, b: AddressKind): AddressKind {
  return SEVERITY[b] > SEVERITY[a] ? b : a;
}

function v4FromBytes(bytes: readonly number[], at: number): ipaddr.IPv4 {
  return new (ip().IPv4)([bytes[at] ?? 0, bytes[at + 1] ?? 0, bytes[at + 2] ?? 0, bytes[at + 3] ?? 0]);
}

/**
 * RFC 6052 section 2.2: where an IPv4 address sits in an IPv4-embedded IPv6 address, per prefix length. Bits
 * 64-71 (byte 8, the 'u' octet) never carry address bits, so the IPv4 address of a /40, /48 or /56 prefix is
 * split around it. Byte offsets into the 16 bytes of the IPv6 address.
 */
const RFC6052_LAYOUTS: readonly { prefix: number; bytes: readonly number[] }[] = [
  { prefix: 32, bytes: [4, 5, 6, 7] },
  { prefix: 40, bytes: [5, 6, 7, 9] },
  { prefix: 48, bytes: [6, 7, 9, 10] },
  { prefix: 56, bytes: [7, 9, 10, 11] },
  { prefix: 64, bytes: [9, 10, 11, 12] },
  { prefix: 96, bytes: [12, 13, 14, 15] },
];

/**
 * The IPv4 addresses a NAT64 address may be translated to. The well-known prefix `64:ff9b::/96` has one layout.
 * Any other address under `64:ff9b::/32` may sit under a network-specific prefix of any length a network carved:
 * every layout is read, and each reading counts (issue 38, bypass 2). Under the local-use prefix `64:ff9b:1::/48`
 * (RFC 8215) that is every layout of a /48 or longer (a /96 puts the IPv4 address in the last 32 bits, a /48
 * around the u octet, ...); a shorter one would overlap the prefix's own bits. A reading in `0.0.0.0/8` is the
 * zero padding of another layout, not an address a translator delivers to, and is left out.
 */
function nat64IPv4(address: ipaddr.IPv6, b: readonly number[]): ipaddr.IPv4[] {
  if (address.match(NAT64_WELL_KNOWN)) return [v4FromBytes(b, 12)];
  const shortest = address.match(NAT64_LOCAL) ? 48 : 32;
  const out: ipaddr.IPv4[] = [];
  for (const { prefix, bytes } of RFC6052_LAYOUTS) {
    if (prefix < shortest || (b[bytes[0] ?? 0] ?? 0) === 0) continue;
    out.push(new (ip().IPv4)(bytes.map((at) => b[at] ?? 0)));
  }
  return out;
}

/**
 * The IPv4 addresses an IPv6 address carries and a network may deliver to: mapped (`::ffff:0:0/96`), translated
 * (`::ffff:0:0:0/96`), IPv4-compatible (`::/96`), NAT64 (`64:ff9b::/32`, every RFC 6052 layout: see
 * {@link nat64IPv4}), 6to4 (`2002::/16`) and Teredo (`2001::/32`: server and de-obfuscated client).
 */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const b = address.toByteArray();
  if (address.match(NAT64_BLOCK)) return nat64IPv4(address, b);
  switch (address.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [v4FromBytes(b, 12)];
    case '6to4':
      return [v4FromBytes(b, 2)];
    case 'teredo':
      return [v4FromBytes(b, 4), new (ip().IPv4)(b.slice(12, 16).map((x) => x ^ 0xff))];
    case 'unicast':
      return address.match(IPV4_COMPATIBLE) ? [v4FromBytes(b, 12)] : [];
    default:
      return [];
  }
}

function classifyV4(address: ipaddr.IPv4): AddressKind {
  return V4_KINDS[address.range()] ?? 'reserved';
}

function classifyV6(address: ipaddr.IPv6): AddressKind {
  const inner = embeddedIPv4(address);
  if (inner.length > 0) {
    // The prefix itself: mapped and NAT64 /96 addresses are as public as their IPv4 part; the local-use NAT64
    // prefix is private; IPv4-compatible addresses and the rest of 64:ff9b::/32 are reserved even for a public
    // IPv4 part.
    const range = address.range();
    let kind: AddressKind =
      range === 'ipv4Mapped' || range === 'rfc6145' || range === '6to4' || range === 'teredo'
        ? 'public'
        : address.match(NAT64_WELL_KNOWN)
          ? 'public'
          : address.match(NAT64_LOCAL)
            ? 'private'
            : 'reserved';
    for (const v4 of inner) kind = stricter(kind, classifyV4(v4));
    return kind;
  }
  const kind = V6_KINDS[address.range()] ?? 'reserved';
  return kind === 'public' && !address.match(GLOBAL_UNICAST) ? 'reserved' : kind;
}

/** Parses an address Node accepts (`net.isIP`), dropping an IPv6 zone id. */
function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const family = isIP(address);
  if (family === 0) throw new TypeError('not an IP address');
  if (family === 4) return ip().IPv4.parse(address);
  const bare = address.replace(/%.*$/, '');
  // ipaddr.js reads a dotted tail `::a.b.c.d` as IPv4-mapped; the socket layer (and the WHATWG URL parser) read it
  // as IPv4-compatible `::xxxx:xxxx`. Canonicalize the way the connection will see it.
  return ip().IPv6.parse(bare.includes('.') ? new URL(`http://[${bare}]/`).hostname.slice(1, -1) : bare);
}

/**
 * Classifies an IP address by the IANA special-purpose registries. An IPv6 address that carries an IPv4 address
 * (mapped, translated, IPv4-compatible, NAT64, 6to4, Teredo) is at least as strict as its IPv4 part.
 */
export function classifyAddress(address: string): AddressKind {
  const parsed = parseAddress(address);
  return parsed.kind() === 'ipv4' ? classifyV4(parsed as ipaddr.IPv4) : classifyV6(parsed as ipaddr.IPv6);
}

/**
 * Cloud metadata and host-agent endpoints, refused whatever their range says (some are private, CGNAT or even
 * public addresses) unless `allowHosts` names the address itself. Keyed by the normalized address.
 */
export const METADATA_ADDRESSES: ReadonlyMap<string, string> = new Map([
  ['169.254.169.254', 'instance metadata (AWS, Azure, GCP, Oracle, OpenStack, DigitalOcean and others)'],
  ['169.254.170.2', 'AWS ECS task metadata and credentials'],
  ['169.254.170.23', 'AWS EKS Pod Identity credentials'],
  ['fd00:ec2::254', 'AWS instance metadata over IPv6'],
  ['fd00:ec2::23', 'AWS EKS Pod Identity credentials over IPv6'],
  ['fd20:ce::254', 'Google Cloud metadata over IPv6'],
  ['100.100.100.200', 'Alibaba Cloud instance metadata'],
  ['168.63.129.16', 'Azure WireServer (host agent)'],
  ['192.0.0.192', 'Oracle Cloud Classic metadata'],
]);

/** The normalized form of an address for comparisons: IPv4 dotted, IPv6 compressed lower case, no zone. */
function normalizeAddress(address: string): string {
  return parseAddress(address).toString();
}

/** The metadata endpoint an address is (directly or inside an IPv6 wrapper), or undefined. */
function metadataEndpoint(address: string): { address: string; what: string } | undefined {
  const parsed = parseAddress(address);
  const candidates = parsed.kind() === 'ipv4' ? [parsed] : [parsed, ...embeddedIPv4(parsed as ipaddr.IPv6)];
  for (const candidate of candidates) {
    const key = candidate.toString();
    const what = METADATA_ADDRESSES.get(key);
    if (what !== undefined) return { address: key, what };
  }
  return undefined;
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * Whether a `denyHosts` / `allowHosts` entry names the host or address. A range matches an IPv6 address itself or
 * the IPv4 addresses it carries: for a deny entry any of them (`'deny'`), for an allow entry all of them, so an
 * address whose NAT64 layouts read as both an allowed and a refused IPv4 address is not allowed by the one.
 */
function matchesHost(
  entry: string,
  host: string,
  address: string | undefined,
  use: 'allow' | 'deny',
): boolean {
  const e = entry.toLowerCase();
  if (e.includes('/')) {
    const target = address ?? (isIP(host) !== 0 ? host : undefined);
    if (target === undefined || !ip().isValidCIDR(e)) return false;
    const range = ip().parseCIDR(e);
    const parsed = parseAddress(target);
    const within = (form: ipaddr.IPv4 | ipaddr.IPv6) => form.kind() === range[0].kind() && form.match(range);
    if (within(parsed)) return true;
    const inner = parsed.kind() === 'ipv4' ? [] : embeddedIPv4(parsed as ipaddr.IPv6);
    return inner.length > 0 && (use === 'deny' ? inner.some(within) : inner.every(within));
  }
  // The one glob matcher of the package (issue 15): `*.example.com` is any name ending in `.example.com`.
  if (e.startsWith('*.')) return matchGlob(e, host);
  if (isIP(e) !== 0 && address !== undefined && normalizeAddress(e) === normalizeAddress(address))
    return true;
  return e === host;
}

/** How many allowed hosts a guard remembers before it starts over (a bound for a client that talks to many). */
const ALLOWED_HOSTS_KEPT = 256;

/** A normalized policy with its resolver; built once per manager. */
export class NetworkGuard {
  readonly #allowPrivate: boolean;
  readonly #allow: readonly string[];
  readonly #deny: readonly string[];
  /** Metadata endpoints named by address in `allowHosts`: a range or a host name never allows one. */
  readonly #allowMetadata: ReadonlySet<string>;
  readonly #resolve: Resolver;
  /**
   * Hosts as written that {@link checkHost} allowed. The policy never changes after construction, so neither does
   * its answer for a host: every request of a transport checks the same one (issue 15, the lean HTTP path).
   */
  readonly #allowedHosts = new Set<string>();

  constructor(policy: NetworkPolicy = DEFAULT_NETWORK_POLICY) {
    this.#allowPrivate = policy.allowPrivate ?? false;
    this.#allow = [...(policy.allowHosts ?? [])];
    this.#deny = [...(policy.denyHosts ?? [])];
    this.#allowMetadata = new Set(this.#allow.filter((e) => isIP(e) !== 0).map((e) => normalizeAddress(e)));
    this.#resolve = policy.resolve ?? defaultResolve;
  }

  /** Throws {@link NetworkPolicyError} when the URL's scheme is not http(s) or its host is refused by name or literal. */
  checkUrl(url: string | URL): void {
    const parsed = typeof url === 'string' ? new URL(url) : url;
    const host = stripBrackets(parsed.hostname.toLowerCase());
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new NetworkPolicyError(
        host,
        'scheme',
        `Refused ${parsed.protocol} URL for host '${host}': only http: and https: are allowed.`,
      );
    }
    this.checkHost(host);
  }

  /** Throws {@link NetworkPolicyError} when a host (a name or a literal address, brackets allowed) is refused as written. */
  checkHost(hostname: string): void {
    const host = stripBrackets(hostname.toLowerCase());
    if (this.#allowedHosts.has(host)) return;
    if (isIP(host) !== 0) this.checkAddress(host, host);
    else if (this.#deny.some((e) => matchesHost(e, host, undefined, 'deny'))) throw this.#denied(host);
    if (this.#allowedHosts.size >= ALLOWED_HOSTS_KEPT) this.#allowedHosts.clear();
    this.#allowedHosts.add(host);
  }

  /** Throws {@link NetworkPolicyError} when `address` (which `host` resolved to) is refused. */
  checkAddress(host: string, address: string): void {
    if (this.#deny.some((e) => matchesHost(e, host, address, 'deny'))) throw this.#denied(host);
    const kind = classifyAddress(address);
    const shown = host === address ? `'${host}'` : `'${host}' (resolved to ${address})`;
    const metadata = metadataEndpoint(address);
    if (metadata !== undefined) {
      if (this.#allowMetadata.has(metadata.address)) return;
      throw new NetworkPolicyError(
        host,
        kind === 'link-local' ? kind : 'metadata',
        `Refused to connect to ${shown}: ${metadata.address} is a cloud metadata endpoint (${metadata.what}). ` +
          `Only an exact '${metadata.address}' in network.allowHosts allows it.`,
      );
    }
    if (this.#allow.some((e) => matchesHost(e, host, address, 'allow'))) return;
    if (kind === 'public') return;
    if (this.#allowPrivate && kind !== 'link-local') return;
    throw new NetworkPolicyError(
      host,
      kind,
      `Refused to connect to ${shown}: it is a ${kind} address. Add the host to network.allowHosts` +
        `${kind === 'link-local' ? '' : ' or set network.allowPrivate'} if this server is trusted.`,
    );
  }

  /** Resolves `host` and checks every address; returns them (in resolver order) when all pass. */
  async resolveChecked(host: string): Promise<readonly LookupAddress[]> {
    const name = stripBrackets(host.toLowerCase());
    if (isIP(name) !== 0) {
      this.checkAddress(name, name);
      return [{ address: name, family: isIP(name) }];
    }
    if (this.#deny.some((e) => matchesHost(e, name, undefined, 'deny'))) throw this.#denied(name);
    const addresses = await this.#resolve(name);
    if (addresses.length === 0) throw new ConnectionError(`Host '${name}' did not resolve to any address.`);
    for (const a of addresses) this.checkAddress(name, a.address);
    return addresses;
  }

  /**
   * A `lookup` for `net.connect` / `tls.connect` that refuses the connection before the socket opens when any
   * resolved address is refused.
   */
  readonly lookup = (
    hostname: string,
    options: { family?: number | string; all?: boolean } | number,
    callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const opts = typeof options === 'number' ? { family: options } : options;
    this.resolveChecked(hostname).then(
      (addresses) => {
        const wanted =
          opts.family === 4 || opts.family === 'IPv4'
            ? 4
            : opts.family === 6 || opts.family === 'IPv6'
              ? 6
              : 0;
        const list = wanted === 0 ? [...addresses] : addresses.filter((a) => a.family === wanted);
        const first = list[0];
        if (first === undefined) {
          const err = Object.assign(new Error(`No IPv${wanted} address for '${hostname}'.`), {
            code: 'ENOTFOUND',
          });
          callback(err, opts.all === true ? [] : '', undefined);
        } else if (opts.all === true) callback(null, list);
        else callback(null, first.address, first.family);
      },
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), ''),
    );
  };

  #denied(host: string): NetworkPolicyError {
    return new NetworkPolicyError(
      host,
      'denied',
      `Refused to connect to '${host}': it matches network.denyHosts.`,
    );
  }
}

function defaultResolve(hostname: string): Promise<readonly LookupAddress[]> {
  return new Promise((resolve, reject) => {
    const options: LookupAllOptions = { all: true, order: 'verbatim' };
    // node:dns is loaded by the first lookup, not at import (issue 15, import time).
    process
      .getBuiltinModule('node:dns')
      .lookup(hostname, options, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });
}
