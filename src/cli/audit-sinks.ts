/**
 * The project file's `audit` section as sinks (issue 40): the JSON-lines file, the fleet's Redis stream and
 * OpenTelemetry logs, each chained when `audit.chain` says so, under the key it names. Keys are read here, from the
 * environment or a file, and go nowhere but the signer: no message names a key's value.
 */
import { readFile } from 'node:fs/promises';
import type { AuditConfig, InterlockConfig } from '../config/load.js';
import type { AUDIT_CHAIN_SINKS } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { combineAuditSinks, JsonLinesAuditSink } from '../security/audit.js';
import type { AuditChainOptions, AuditVerifyKey } from '../security/audit-chain.js';
import { OpenTelemetryLogAuditSink } from '../security/audit-log.js';
import { DecisionRecorder } from '../security/recording.js';
import type { AuditSink } from '../security/types.js';
import { StreamAuditSink } from '../state/audit-stream.js';
import type { StateStore } from '../state/types.js';

type Env = Readonly<Record<string, string | undefined>>;
type ChainConfig = NonNullable<AuditConfig['chain']>;

async function keyFile(file: string, path: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(
      `${path}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'}).`,
      {
        issues: [{ path, message: 'the key file cannot be read' }],
        cause: err,
      },
    );
  }
}

async function hmacSecret(key: ChainConfig['key'], env: Env): Promise<string | undefined> {
  if ('hmacSecretEnv' in key) {
    const value = env[key.hmacSecretEnv];
    if (value === undefined || value === '') {
      throw new ConfigError(`audit.chain.key.hmacSecretEnv: the variable ${key.hmacSecretEnv} is not set.`, {
        issues: [
          { path: 'audit.chain.key.hmacSecretEnv', message: `set ${key.hmacSecretEnv} to the audit secret` },
        ],
      });
    }
    return value;
  }
  if ('hmacSecretFile' in key) {
    return (await keyFile(key.hmacSecretFile, 'audit.chain.key.hmacSecretFile')).replace(/\r?\n$/, '');
  }
  return undefined;
}

/** The chain options `audit.chain` describes, its key read. */
export async function auditChainOptions(chain: ChainConfig, env: Env): Promise<AuditChainOptions> {
  const secret = await hmacSecret(chain.key, env);
  const key =
    secret !== undefined
      ? { hmacSecret: secret }
      : {
          ed25519PrivateKey: await keyFile(
            (chain.key as { ed25519PrivateKeyFile: string }).ed25519PrivateKeyFile,
            'audit.chain.key.ed25519PrivateKeyFile',
          ),
        };
  return {
    key,
    ...(chain.checkpointEvery === undefined ? {} : { checkpointEvery: chain.checkpointEvery }),
    ...(chain.checkpointSeconds === undefined
      ? {}
      : { checkpointIntervalMs: Math.round(chain.checkpointSeconds * 1000) }),
  };
}

/** The key that verifies checkpoints of `audit.chain`: the secret, or the public key (else the private key file). */
export async function auditVerifyKey(chain: ChainConfig, env: Env): Promise<AuditVerifyKey> {
  const secret = await hmacSecret(chain.key, env);
  if (secret !== undefined) return { hmacSecret: secret };
  const key = chain.key as { ed25519PrivateKeyFile: string; ed25519PublicKeyFile?: string | undefined };
  return key.ed25519PublicKeyFile !== undefined
    ? { ed25519PublicKey: await keyFile(key.ed25519PublicKeyFile, 'audit.chain.key.ed25519PublicKeyFile') }
    : { ed25519PublicKey: await keyFile(key.ed25519PrivateKeyFile, 'audit.chain.key.ed25519PrivateKeyFile') };
}

/**
 * The sinks of an `audit` section, combined, with the decision recording (`audit.record`) among them; `undefined`
 * when it names none.
 */
export async function projectAuditSink(
  config: Pick<InterlockConfig, 'audit' | 'recording' | 'secrets'>,
  env: Env,
  store: StateStore | undefined,
): Promise<AuditSink | undefined> {
  const { audit, recording } = config;
  if (audit === undefined) return undefined;
  const chain = audit.chain === undefined ? undefined : await auditChainOptions(audit.chain, env);
  const chained = (sink: (typeof AUDIT_CHAIN_SINKS)[number]) =>
    chain !== undefined && (audit.chain?.sinks === undefined || audit.chain.sinks.includes(sink))
      ? chain
      : undefined;
  const sinks: AuditSink[] = [];
  if (audit.file !== undefined) sinks.push(new JsonLinesAuditSink(audit.file, { chain: chained('file') }));
  if (audit.stream !== undefined && store !== undefined) {
    const options = audit.stream === true ? {} : audit.stream;
    sinks.push(
      new StreamAuditSink(store, {
        stream: options.name,
        maxLength: options.maxLength,
        chain: chained('stream'),
      }),
    );
  }
  if (audit.openTelemetryLogs === true) {
    sinks.push(new OpenTelemetryLogAuditSink({ chain: chained('openTelemetryLogs') }));
  }
  if (recording !== undefined) sinks.push(new DecisionRecorder({ ...recording, secrets: config.secrets }));
  if (sinks.length <= 1) return sinks[0];
  return combineAuditSinks(...sinks);
}
