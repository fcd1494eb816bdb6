/**
 * The top-level sections of the project file (`network`, `http`, `state`, `gateway`) as the schemas that load
 * them (issue 15, "config parsed once"): one zod pipeline per section expands `${VAR}` (keeping each value it
 * puts in as a secret, and reporting an unset variable at its field), validates, and makes certificate paths
 * absolute. Its output type is the section's config type.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { type ExpansionContext, expanded } from './env.js';
import { GatewayConfigSchema, type GatewayTlsConfig } from './gateway.js';
import { AuditConfigSchema, StateConfigSchema } from './schema.js';
import { collectSecretValues } from './secrets.js';
import { type ServerTlsConfig, serverSchemas } from './servers.js';

/** What loading needs besides the text of a section. */
export interface LoadContext {
  /** Variables for `${VAR}` expansion. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where relative paths start: the directory of the project file. */
  readonly dir: string;
  /** Receives every value a variable puts into a section, and URL passwords written there. */
  readonly secrets: Set<string>;
}

/** `~` and `~/...` as the home directory. */
export const expandHome = (p: string): string =>
  p === '~' || p.startsWith('~/') ? join(homedir(), p.slice(1)) : p;

/** `caFile`, `certFile` and `keyFile` made absolute, relative ones starting at `dir`. */
export function tlsPaths(tls: ServerTlsConfig, dir: string): ServerTlsConfig {
  const abs = (file: string) => resolve(dir, expandHome(file));
  return {
    ...tls,
    ...(tls.caFile === undefined
      ? {}
      : { caFile: typeof tls.caFile === 'string' ? abs(tls.caFile) : tls.caFile.map(abs) }),
    ...(tls.certFile === undefined ? {} : { certFile: abs(tls.certFile) }),
    ...(tls.keyFile === undefined ? {} : { keyFile: abs(tls.keyFile) }),
  };
}

/** The gateway's certificate files, relative to the project file. */
function gatewayTlsPaths(tls: GatewayTlsConfig, dir: string): GatewayTlsConfig {
  const abs = (file: string | undefined) => (file === undefined ? undefined : resolve(dir, expandHome(file)));
  return {
    ...tls,
    ...(tls.certFile === undefined ? {} : { certFile: abs(tls.certFile) }),
    ...(tls.keyFile === undefined ? {} : { keyFile: abs(tls.keyFile) }),
    ...(tls.clientCaFile === undefined ? {} : { clientCaFile: abs(tls.clientCaFile) }),
  };
}

/** The schemas that load each top-level section of a project file in `ctx`. */
export function sectionSchemas(ctx: LoadContext) {
  const expansion: ExpansionContext = {
    env: ctx.env,
    collect: (value) => collectSecretValues(value, ctx.env, ctx.secrets),
  };
  const { HttpConfigSchema, NetworkConfigSchema } = serverSchemas();
  return {
    network: expanded(NetworkConfigSchema, expansion),
    state: expanded(StateConfigSchema, expansion),
    http: expanded(HttpConfigSchema, expansion).transform((http) =>
      http.tls === undefined ? http : { ...http, tls: tlsPaths(http.tls, ctx.dir) },
    ),
    // File paths of the audit section (the trail, the key files) start at the project file's directory.
    audit: expanded(AuditConfigSchema, expansion).transform((audit) => {
      const abs = (file: string) => resolve(ctx.dir, expandHome(file));
      const key = audit.chain?.key;
      return {
        ...audit,
        ...(audit.file === undefined ? {} : { file: abs(audit.file) }),
        ...(audit.chain === undefined || key === undefined
          ? {}
          : {
              chain: {
                ...audit.chain,
                key:
                  'hmacSecretFile' in key
                    ? { hmacSecretFile: abs(key.hmacSecretFile) }
                    : 'ed25519PrivateKeyFile' in key
                      ? {
                          ed25519PrivateKeyFile: abs(key.ed25519PrivateKeyFile),
                          ...(key.ed25519PublicKeyFile === undefined
                            ? {}
                            : { ed25519PublicKeyFile: abs(key.ed25519PublicKeyFile) }),
                        }
                      : key,
              },
            }),
      };
    }),
    gateway: expanded(GatewayConfigSchema, expansion).transform((gateway) =>
      gateway.http?.tls === undefined
        ? gateway
        : { ...gateway, http: { ...gateway.http, tls: gatewayTlsPaths(gateway.http.tls, ctx.dir) } },
    ),
  };
}
