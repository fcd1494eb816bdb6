/**
 * SSRF guard (issue 9). A server URL, every redirect hop and every OAuth endpoint is refused when it resolves to a
 * loopback, private, link-local (cloud metadata 169.254.169.254), CGNAT or otherwise non-public address, unless the
 * manager's {@link NetworkPolicy} allows it. The check runs on the resolved addresses inside the socket connector,
 * before the socket opens, so a name that re-resolves to another address (DNS rebinding) is caught too.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { ConnectionError, ErrorCode, InteropError, type InteropErrorOptions } from '../errors.js';

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
export class NetworkPolicyError extends InteropError {
  /** The refused host name or address (never a URL with credentials or a query). */
  readonly host: string;
  /** Why: the kind of address, `scheme`, or `denied` (matched `denyHosts`). */
  readonly reason: AddressKind | 'scheme' | 'denied';

  constructor(
    host: string,
    reason: AddressKind | 'scheme' | 'denied',
    message: string,
    options: InteropErrorOptions = {},
  ) {
    super(ErrorCode.NETWORK_DENIED, message, options);
    this.host = host;
    this.reason = reason;
  }
}

const v4 = new Map<AddressKind, BlockList>();
const v6 = new Map<AddressKind, BlockList>();
function ranges(
  map: Map<AddressKind, BlockList>,
  kind: AddressKind,
  family: 'ipv4' | 'ipv6',
  list: string[],
) {
  const block = map.get(kind) ?? new BlockList();
  for (const cidr of list) {
    const [net, prefix] = cidr.split('/') as [string, string];
    block.addSubnet(net, Number(prefix), family);
  }
  map.set(kind, block);
}
// IANA special-purpose registries (RFC 6890 and updates).
ranges(v4, 'unspecified', 'ipv4', ['0.0.0.0/8']);
ranges(v4, 'loopback', 'ipv4', ['127.0.0.0/8']);
ranges(v4, 'private', 'ipv4', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']);
ranges(v4, 'link-local', 'ipv4', ['169.254.0.0/16']);
ranges(v4, 'cgnat', 'ipv4', ['100.64.0.0/10']);
ranges(v4, 'reserved', 'ipv4', [
  '192.0.0.0/24',
  '192.0.2.0/24',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '240.0.0.0/4',
]);
ranges(v4, 'multicast', 'ipv4', ['224.0.0.0/4']);
ranges(v6, 'unspecified', 'ipv6', ['::/128']);
ranges(v6, 'loopback', 'ipv6', ['::1/128']);
ranges(v6, 'private', 'ipv6', ['fc00::/7']);
ranges(v6, 'link-local', 'ipv6', ['fe80::/10']);
ranges(v6, 'reserved', 'ipv6', ['100::/64', '2001:db8::/32', 'fec0::/10']);
ranges(v6, 'multicast', 'ipv6', ['ff00::/8']);

/** The IPv4 address embedded in an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible or NAT64 IPv6 address. */
function embeddedIPv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const m = /^(?:::ffff:(?:0:)?|::|64:ff9b::)(.+)$/.exec(lower);
  const tail = m?.[1];
  if (tail === undefined) return undefined;
  if (isIP(tail) === 4) return tail;
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(tail);
  if (hex === null) return undefined;
  const hi = Number.parseInt(hex[1] ?? '0', 16);
  const lo = Number.parseInt(hex[2] ?? '0', 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Classifies an IP address; IPv4-mapped and NAT64 IPv6 addresses are judged by their IPv4 part. */
export function classifyAddress(address: string): AddressKind {
  const family = isIP(address);
  if (family === 0) throw new TypeError('not an IP address');
  if (family === 6) {
    const inner = embeddedIPv4(address);
    if (inner !== undefined && inner !== '0.0.0.0' && inner !== '0.0.0.1') return classifyAddress(inner);
    for (const [kind, block] of v6) if (block.check(address, 'ipv6')) return kind;
    return 'public';
  }
  for (const [kind, block] of v4) if (block.check(address, 'ipv4')) return kind;
  return 'public';
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function matchesHost(entry: string, host: string, address: string | undefined): boolean {
  const e = entry.toLowerCase();
  if (e.includes('/')) {
    const [net, prefix] = e.split('/') as [string, string];
    const family = isIP(net);
    const target = address ?? (isIP(host) !== 0 ? host : undefined);
    if (family === 0 || target === undefined) return false;
    const block = new BlockList();
    block.addSubnet(net, Number(prefix), family === 4 ? 'ipv4' : 'ipv6');
    const targetFamily = isIP(target) === 4 ? 'ipv4' : 'ipv6';
    const inner = targetFamily === 'ipv6' ? embeddedIPv4(target) : undefined;
    return block.check(target, targetFamily) || (inner !== undefined && block.check(inner, 'ipv4'));
  }
  if (e.startsWith('*.')) return host.endsWith(e.slice(1));
  if (isIP(e) !== 0 && address !== undefined && e === address.toLowerCase()) return true;
  return e === host;
}

/** A normalized policy with its resolver; built once per manager. */
export class NetworkGuard {
  readonly #allowPrivate: boolean;
  readonly #allow: readonly string[];
  readonly #deny: readonly string[];
  readonly #resolve: Resolver;

  constructor(policy: NetworkPolicy = DEFAULT_NETWORK_POLICY) {
    this.#allowPrivate = policy.allowPrivate ?? false;
    this.#allow = [...(policy.allowHosts ?? [])];
    this.#deny = [...(policy.denyHosts ?? [])];
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
    if (isIP(host) !== 0) this.checkAddress(host, host);
    else if (this.#deny.some((e) => matchesHost(e, host, undefined))) throw this.#denied(host);
  }

  /** Throws {@link NetworkPolicyError} when `address` (which `host` resolved to) is refused. */
  checkAddress(host: string, address: string): void {
    if (this.#deny.some((e) => matchesHost(e, host, address))) throw this.#denied(host);
    if (this.#allow.some((e) => matchesHost(e, host, address))) return;
    const kind = classifyAddress(address);
    if (kind === 'public') return;
    if (this.#allowPrivate && kind !== 'link-local') return;
    const shown = host === address ? `'${host}'` : `'${host}' (resolved to ${address})`;
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
    if (this.#deny.some((e) => matchesHost(e, name, undefined))) throw this.#denied(name);
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
    dnsLookup(hostname, options, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });
}
