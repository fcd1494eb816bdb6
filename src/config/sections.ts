/**
 * The top-level sections of the project file (`network`, `http`, `state`, `gateway`) as the schemas that load
 * them (issue 15, "config parsed once"): one zod pipeline per section expands `${VAR}` (keeping each value it
 * puts in as a secret, and reporting an unset variable at its field), validates, and makes certificate paths
 * absolute. Its output type is the section's config type.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { ConfigIssue } from '../errors.js';
import { GatewayConfigSchema, type GatewayTlsConfig } from '../gateway/options.js';
import { HttpConfigSchema, NetworkConfigSchema, type ServerTlsConfig } from '../interop/config.js';
import { expandEnv } from './env.js';
import { parsePath } from './issues.js';
import { StateConfigSchema } from './schema.js';
import { collectSecretValues } from './secrets.js';

/** What loading needs besides the text of a section. */
export interface LoadContext {
  /** Variables for `${VAR}` expansion. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where relative paths start: the directory of the project file. */
  readonly dir: string;
  /** Receives every value a variable puts into the section, and URL passwords written there. */
  readonly secrets: Set<string>;
}

/** `~` and `~/...` as the home directory. */
export const expandHome = (p: string): string =>
  p === '~' || p.startsWith('~/') ? join(homedir(), p.slice(1)) : p;

/**
 * `schema` behind `${VAR}` expansion: the values the variables put in are kept as secrets; an unset variable is an
 * issue at its field, and the schema does not run then (the text would only be half expanded).
 */
export function expanded<S extends z.ZodType>(schema: S, ctx: LoadContext) {
  return z
    .unknown()
    .transform((value, zod) => {
      collectSecretValues(value, ctx.env, ctx.secrets);
      const issues: ConfigIssue[] = [];
      const out = expandEnv(value, { env: ctx.env }, '', issues);
      for (const issue of issues)
        zod.addIssue({ code: 'custom', message: issue.message, path: parsePath(issue.path) });
      return out;
    })
    .pipe(schema);
}

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
  return {
    network: expanded(NetworkConfigSchema, ctx),
    state: expanded(StateConfigSchema, ctx),
    http: expanded(HttpConfigSchema, ctx).transform((http) =>
      http.tls === undefined ? http : { ...http, tls: tlsPaths(http.tls, ctx.dir) },
    ),
    gateway: expanded(GatewayConfigSchema, ctx).transform((gateway) =>
      gateway.http?.tls === undefined
        ? gateway
        : { ...gateway, http: { ...gateway.http, tls: gatewayTlsPaths(gateway.http.tls, ctx.dir) } },
    ),
  };
}
