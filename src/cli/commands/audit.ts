/**
 * `interlock audit verify [FILE]` (issue 40): checks chained audit trails, the JSON-lines file and the fleet's Redis
 * stream, and names every deleted, edited, reordered or inserted record, forged checkpoint and cut tail by where it
 * is (line or stream id), chain and sequence number. Exit 1 on any finding, 0 when every trail verifies.
 * Without FILE or --redis it checks the trails the project file's `audit` section writes, under its `audit.chain`
 * key; --key-env, --key-file or --public-key name another key.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { type InterlockConfig, loadInterlockConfig } from '../../config/load.js';
import { createMasker } from '../../config/secrets.js';
import type { AuditVerifyKey } from '../../security/audit-chain.js';
import { type AuditVerifyReport, parseAuditLines, verifyAuditChain } from '../../security/audit-verify.js';
import { readAuditStream } from '../../state/audit-stream.js';
import { auditVerifyKey } from '../audit-sinks.js';
import { ExitCode, UsageError } from '../exit.js';
import type { CommandContext } from '../project.js';

/** Options of `interlock audit verify`. */
export interface AuditVerifyOptions {
  redis?: string | undefined;
  stream?: string | undefined;
  keyPrefix?: string | undefined;
  keyEnv?: string | undefined;
  keyFile?: string | undefined;
  publicKey?: string | undefined;
  open?: boolean | undefined;
}

interface Trail {
  readonly source: string;
  readonly report: AuditVerifyReport;
}

async function explicitKey(
  ctx: CommandContext,
  options: AuditVerifyOptions,
): Promise<AuditVerifyKey | undefined> {
  const given = [options.keyEnv, options.keyFile, options.publicKey].filter((k) => k !== undefined);
  if (given.length > 1) throw new UsageError('Give one of --key-env, --key-file and --public-key.');
  if (options.keyEnv !== undefined) {
    const value = ctx.io.env[options.keyEnv];
    if (value === undefined || value === '')
      throw new UsageError(`--key-env: the variable ${options.keyEnv} is not set.`);
    return { hmacSecret: value };
  }
  const read = async (file: string, flag: string) =>
    readFile(resolve(ctx.io.cwd, file), 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new UsageError(`${flag}: cannot read ${file} (${err.code ?? 'error'}).`);
    });
  if (options.keyFile !== undefined) {
    return { hmacSecret: (await read(options.keyFile, '--key-file')).replace(/\r?\n$/, '') };
  }
  if (options.publicKey !== undefined)
    return { ed25519PublicKey: await read(options.publicKey, '--public-key') };
  return undefined;
}

async function projectConfig(ctx: CommandContext, needed: boolean): Promise<InterlockConfig | undefined> {
  if (!needed && ctx.configFile === undefined) {
    // Everything was given on the command line: a project file is used only when there is one.
    return loadInterlockConfig({ cwd: ctx.io.cwd, env: ctx.io.env }).catch(() => undefined);
  }
  return loadInterlockConfig({ file: ctx.configFile, cwd: ctx.io.cwd, env: ctx.io.env });
}

export async function auditCommand(
  ctx: CommandContext,
  file: string | undefined,
  options: AuditVerifyOptions,
): Promise<number> {
  const { printer } = ctx;
  const key = await explicitKey(ctx, options);
  const config = await projectConfig(
    ctx,
    key === undefined || (file === undefined && options.redis === undefined),
  );
  if (config !== undefined) {
    printer.setMask(createMasker(config.secrets.flatMap((s) => [s, JSON.stringify(s).slice(1, -1)])));
  }
  const chain = config?.audit?.chain;
  const verifyKey = key ?? (chain === undefined ? undefined : await auditVerifyKey(chain, ctx.io.env));
  if (verifyKey === undefined) {
    throw new UsageError(
      'No key to check the checkpoints with: add audit.chain.key to the project file, or pass --key-env VAR, --key-file FILE or --public-key FILE.',
    );
  }
  const verify = { key: verifyKey, open: options.open === true };
  const trails: Trail[] = [];

  const files =
    file !== undefined
      ? [resolve(ctx.io.cwd, file)]
      : options.redis === undefined && config?.audit?.file !== undefined
        ? [config.audit.file]
        : [];
  for (const path of files) {
    const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new UsageError(`Cannot read the audit file ${path} (${err.code ?? 'error'}).`);
    });
    trails.push({ source: path, report: verifyAuditChain(parseAuditLines(text), verify) });
  }

  const streamConfig = config?.audit?.stream;
  const wantsStream = options.redis !== undefined || (file === undefined && streamConfig !== undefined);
  if (wantsStream) {
    const redis = config?.state?.redis;
    const url = options.redis ?? redis?.url;
    if (url === undefined)
      throw new UsageError('No Redis to read the stream from: pass --redis URL or add state.redis.');
    const named = streamConfig === undefined || streamConfig === true ? {} : streamConfig;
    const stream = options.stream ?? named.name ?? 'audit';
    const { RedisStateStore } = await import('../../state/redis.js');
    const store = await RedisStateStore.connect(
      options.redis === undefined && redis !== undefined
        ? { ...redis, ...(options.keyPrefix === undefined ? {} : { keyPrefix: options.keyPrefix }) }
        : { url, ...(options.keyPrefix === undefined ? {} : { keyPrefix: options.keyPrefix }) },
    );
    try {
      const trail = await readAuditStream(store, { stream, maxLength: named.maxLength });
      trails.push({
        source: `redis stream ${stream}`,
        report: verifyAuditChain(trail.entries, { ...verify, trimmedHead: trail.trimmedHead }),
      });
    } finally {
      await store.close();
    }
  }
  if (trails.length === 0) {
    throw new UsageError(
      'No audit trail to verify: give a FILE or --redis URL, or add audit.file or audit.stream to the project file.',
    );
  }
  const ok = trails.every((t) => t.report.ok);
  if (printer.json) {
    printer.data({ ok, trails: trails.map((t) => ({ source: t.source, ...t.report })) });
  } else {
    for (const { source, report } of trails) printTrail(ctx, source, report);
  }
  return ok ? ExitCode.OK : ExitCode.ERROR;
}

function printTrail(ctx: CommandContext, source: string, report: AuditVerifyReport): void {
  const { printer } = ctx;
  const records = report.chains.reduce((n, c) => n + c.records, 0);
  const sealed = report.chains.filter((c) => c.sealed).length;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const summary = `${plural(report.chains.length, 'chain')}, ${plural(records, 'record')}, ${sealed} sealed`;
  if (report.ok) {
    printer.line(`${printer.style('green', 'ok')} ${source}: ${summary}, no finding`);
    return;
  }
  printer.line(
    `${printer.style('red', 'TAMPERED')} ${source}: ${summary}, ${plural(report.findings.length, 'finding')}`,
  );
  for (const f of report.findings) {
    const where = [
      f.chain === undefined ? undefined : `chain ${f.chain.slice(0, 8)}`,
      f.seq === undefined ? undefined : `seq ${f.seq}`,
    ]
      .filter((p) => p !== undefined)
      .join(' ');
    printer.line(
      `  ${f.at}  ${printer.style('bold', f.kind)}${where === '' ? '' : ` (${where})`}: ${f.message}`,
    );
  }
}
