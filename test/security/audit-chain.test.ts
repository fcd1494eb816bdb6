/**
 * A tamper-evident audit file (issue 40): a chained JSON-lines file, written by the real sink, then edited the
 * ways someone with write access would, and each change is named where it is.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonLinesAuditSink } from '../../src/security/audit.js';
import {
  AUDIT_CHAIN_GENESIS,
  type AuditChainOptions,
  auditRecordHash,
} from '../../src/security/audit-chain.js';
import {
  type AuditVerifyReport,
  parseAuditLines,
  verifyAuditChain,
} from '../../src/security/audit-verify.js';
import type { AuditRecord } from '../../src/security/types.js';
import { waitUntil } from '../helpers/wait.js';

const SECRET = 'an audit secret of at least thirty-two bytes, for tests only';
const key = { hmacSecret: SECRET };

function record(n: number): AuditRecord {
  return {
    time: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    agent: 'tests',
    resource: `mcp:fs:tool${n}`,
    action: 'execute',
    effect: n % 3 === 0 ? 'deny' : 'allow',
    allowed: n % 3 !== 0,
    reason: n % 3 === 0 ? 'denied by rule no-writes' : 'allowed by rule reads',
    argumentKeys: ['path'],
  };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'interlock-chain-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let files = 0;
/** 12 records through a chained sink with a checkpoint every 5, closed: lines are records 1-5, cp 5, 6-10, cp 10, 11-12, final cp 12. */
async function writeTrail(options: { chain?: AuditChainOptions; records?: number } = {}) {
  const path = join(dir, `audit-${++files}.jsonl`);
  const sink = new JsonLinesAuditSink(path, { chain: options.chain ?? { key, checkpointEvery: 5 } });
  for (let i = 1; i <= (options.records ?? 12); i++) await sink.write(record(i));
  await sink.close();
  const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');
  return { path, lines, chain: sink.chainId as string };
}

const verify = (lines: readonly string[], options: { open?: boolean } = {}) =>
  verifyAuditChain(parseAuditLines(`${lines.join('\n')}\n`), { key, ...options });

/** The line number (1-based) of the record with `seq`. */
const lineOf = (lines: readonly string[], seq: number) =>
  lines.findIndex((l) => (JSON.parse(l) as { chain?: { seq: number } }).chain?.seq === seq) + 1;

const kinds = (report: AuditVerifyReport) => report.findings.map((f) => `${f.kind}@${f.at}#${f.seq}`);

describe('a chained JSON-lines audit file', () => {
  it('verifies when nobody touched it: one sealed chain, every checkpoint signed', async () => {
    const { lines, chain } = await writeTrail();
    expect(lines).toHaveLength(15);
    const first = JSON.parse(lines[0] as string) as AuditRecord & { chain: Record<string, unknown> };
    expect(first).toMatchObject({
      resource: 'mcp:fs:tool1',
      chain: { id: chain, seq: 1, prev: AUDIT_CHAIN_GENESIS },
    });
    expect(JSON.parse(lines[5] as string)).toMatchObject({ checkpoint: { chain, seq: 5, final: false } });
    expect(JSON.parse(lines[14] as string)).toMatchObject({ checkpoint: { chain, seq: 12, final: true } });
    const report = verify(lines);
    expect(report.findings).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.chains).toEqual([
      { id: chain, records: 12, firstSeq: 1, lastSeq: 12, checkpoints: 3, lastCheckpoint: 12, sealed: true },
    ]);
  });

  it('names an edited record by its line and sequence number', async () => {
    const { lines } = await writeTrail();
    const at = lineOf(lines, 7);
    const edited = [...lines];
    edited[at - 1] = (edited[at - 1] as string).replace('"allowed":true', '"allowed":false');
    const report = verify(edited);
    expect(report.ok).toBe(false);
    expect(kinds(report)).toEqual([`edited@line ${at}#7`]);
  });

  it('catches an edit whose hashes were all recomputed, at the checkpoint that no longer matches', async () => {
    const { lines } = await writeTrail();
    // A forger who knows the scheme rewrites seq 7 and recomputes every hash after it; the key is what they lack.
    const forged = [...lines];
    let prev = '';
    for (let i = 0; i < forged.length; i++) {
      const value = JSON.parse(forged[i] as string) as Record<string, unknown> & {
        chain?: { id: string; seq: number; prev: string; hash: string };
      };
      if (value.chain === undefined) continue;
      const { chain, ...body } = value;
      if (chain.seq === 7) body.reason = 'allowed by rule everything';
      const link = { id: chain.id, seq: chain.seq, prev: chain.seq >= 7 ? prev : chain.prev };
      const hash = chain.seq >= 7 ? auditRecordHash(body, link) : chain.hash;
      prev = hash;
      forged[i] = JSON.stringify({ ...body, chain: { ...link, hash } });
    }
    const report = verify(forged);
    const cp10 = lines.findIndex((l) => l.includes('"checkpoint"') && l.includes('"seq":10')) + 1;
    const cp12 = lines.length;
    expect(kinds(report)).toEqual([`edited@line ${cp10}#10`, `edited@line ${cp12}#12`]);
    expect(report.findings[0]?.message).toContain('between seq 6 and 10');
  });

  it('names a deleted record: which sequence numbers are missing, between which lines', async () => {
    const { lines } = await writeTrail();
    const at = lineOf(lines, 4);
    const deleted = lines.filter((_, i) => i !== at - 1);
    const report = verify(deleted);
    expect(kinds(report)).toEqual([`deleted@line ${at}#4`]);
    expect(report.findings[0]?.message).toBe(`seq 4 is missing between line ${at - 1} and line ${at}`);
  });

  it('names two records swapped in place as reordered, at both lines', async () => {
    const { lines } = await writeTrail();
    const [a, b] = [lineOf(lines, 3), lineOf(lines, 4)];
    const swapped = [...lines];
    [swapped[a - 1], swapped[b - 1]] = [lines[b - 1] as string, lines[a - 1] as string];
    const report = verify(swapped);
    expect(kinds(report)).toEqual([`reordered@line ${a}#4`, `reordered@line ${b}#3`]);
  });

  it('names inserted records: a copy, a line without chain fields, a well-hashed record after the final checkpoint', async () => {
    const { lines, chain } = await writeTrail();
    const at = lineOf(lines, 2);
    const tail = JSON.parse(lines[lineOf(lines, 12) - 1] as string) as { chain: { hash: string } };
    const body = { ...record(13), reason: 'allowed by rule forged' };
    const link = { id: chain, seq: 13, prev: tail.chain.hash };
    const appended = JSON.stringify({ ...body, chain: { ...link, hash: auditRecordHash(body, link) } });
    const inserted = [
      ...lines.slice(0, at),
      lines[at - 1] as string, // a copy of seq 2 right after it
      JSON.stringify(record(99)), // no chain fields
      ...lines.slice(at),
      appended,
    ];
    const report = verify(inserted);
    expect(kinds(report)).toEqual([
      `inserted@line ${at + 2}#undefined`,
      `inserted@line ${at + 1}#2`,
      `inserted@line ${inserted.length}#13`,
    ]);
  });

  it('catches a tail cut after a checkpoint, records and checkpoints alike, and says what the last checkpoint covers', async () => {
    const { lines } = await writeTrail();
    const cut = lines.slice(0, lineOf(lines, 8));
    const report = verify(cut);
    expect(kinds(report)).toEqual([`unsealed@line ${cut.length}#8`]);
    expect(report.findings[0]?.message).toContain('the last signed checkpoint covers seq 5');
    // What a live trail cannot show (documented): with `open`, a tail cut after the last checkpoint goes unseen.
    expect(verify(cut, { open: true }).ok).toBe(true);
  });

  it('catches records removed from the tail when a later checkpoint stayed', async () => {
    const { lines } = await writeTrail();
    const kept = lines.filter((l) => {
      const seq = (JSON.parse(l) as { chain?: { seq: number } }).chain?.seq;
      return seq === undefined || seq <= 10;
    });
    const report = verify(kept);
    expect(kinds(report)).toEqual([`truncated@line ${kept.length}#12`]);
    expect(report.findings[0]?.message).toContain('seq 11–12 were removed');
  });

  it('names a forged checkpoint, and the chain it leaves unsealed', async () => {
    const { lines } = await writeTrail();
    const forged = [...lines];
    const final = JSON.parse(lines[14] as string) as { checkpoint: { seq: number } };
    final.checkpoint.seq = 11; // claim the trail ends one record earlier
    forged[14] = JSON.stringify(final);
    const report = verify(forged.filter((_, i) => i !== lineOf(lines, 12) - 1));
    expect(kinds(report)).toEqual([`forged-checkpoint@line 14#11`, `unsealed@line 14#11`]);
  });

  it('fails every checkpoint under the wrong key', async () => {
    const { lines } = await writeTrail();
    const report = verifyAuditChain(parseAuditLines(lines.join('\n')), {
      key: { hmacSecret: `${SECRET} but another one` },
    });
    expect(kinds(report)).toEqual([
      'forged-checkpoint@line 6#5',
      'forged-checkpoint@line 12#10',
      'forged-checkpoint@line 15#12',
      'unsealed@line 15#12',
    ]);
  });

  it('signs with an Ed25519 private key and verifies with its public key only', async () => {
    const pair = generateKeyPairSync('ed25519');
    const other = generateKeyPairSync('ed25519');
    const pem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const { lines } = await writeTrail({ chain: { key: { ed25519PrivateKey: pem }, checkpointEvery: 5 } });
    expect(JSON.parse(lines[5] as string)).toMatchObject({ checkpoint: { alg: 'ed25519' } });
    const publicPem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(
      verifyAuditChain(parseAuditLines(lines.join('\n')), { key: { ed25519PublicKey: publicPem } }).ok,
    ).toBe(true);
    const wrong = verifyAuditChain(parseAuditLines(lines.join('\n')), {
      key: { ed25519PublicKey: other.publicKey },
    });
    expect(wrong.findings.filter((f) => f.kind === 'forged-checkpoint')).toHaveLength(3);
    // An HMAC secret does not verify an Ed25519 checkpoint (no algorithm confusion).
    expect(verifyAuditChain(parseAuditLines(lines.join('\n')), { key }).ok).toBe(false);
  });

  it('keeps one chain per sink when two processes append to one file, and checks each', async () => {
    const path = join(dir, 'shared.jsonl');
    const a = new JsonLinesAuditSink(path, { chain: { key, checkpointEvery: 2 } });
    const b = new JsonLinesAuditSink(path, { chain: { key, checkpointEvery: 2 } });
    for (let i = 1; i <= 5; i++) await Promise.all([a.write(record(i)), b.write(record(100 + i))]);
    await Promise.all([a.close(), b.close()]);
    const text = await readFile(path, 'utf8');
    const report = verifyAuditChain(parseAuditLines(text), { key });
    expect(report.findings).toEqual([]);
    expect(report.chains.map((c) => [c.id, c.records, c.sealed]).sort()).toEqual(
      [
        [a.chainId, 5, true],
        [b.chainId, 5, true],
      ].sort(),
    );
    // Deleting one of b's records names b's chain, not a's.
    const lines = text.trimEnd().split('\n');
    const victim = lines.findIndex((l) => l.includes(`"id":"${b.chainId}","seq":3`));
    const report2 = verifyAuditChain(parseAuditLines(lines.filter((_, i) => i !== victim).join('\n')), {
      key,
    });
    expect(report2.findings.map((f) => [f.kind, f.chain, f.seq])).toEqual([['deleted', b.chainId, 3]]);
  });

  it('writes a checkpoint when records waited checkpointIntervalMs, without waiting for more records', async () => {
    const path = join(dir, 'timed.jsonl');
    const sink = new JsonLinesAuditSink(path, {
      chain: { key, checkpointEvery: 1000, checkpointIntervalMs: 20 },
    });
    await sink.write(record(1));
    const line = await waitUntil(async () =>
      (await readFile(path, 'utf8')).split('\n').find((l) => l.startsWith('{"checkpoint"')),
    );
    expect(JSON.parse(line)).toMatchObject({ checkpoint: { chain: sink.chainId, seq: 1, final: false } });
    await sink.close();
    const report = verifyAuditChain(parseAuditLines(await readFile(path, 'utf8')), { key });
    expect(report.ok).toBe(true);
    expect(report.chains[0]?.checkpoints).toBe(2);
  });

  it('reports a line that is not JSON as unreadable, by its line number', async () => {
    const { lines } = await writeTrail({ records: 2 });
    const report = verify([lines[0] as string, '{"half', ...lines.slice(1)]);
    expect(kinds(report)).toEqual(['unreadable@line 2#undefined']);
  });

  it('refuses a short HMAC secret or a key that is not Ed25519 with a coded error that never shows the key', () => {
    const short = 'too-short-secret';
    expect(() => new JsonLinesAuditSink(join(dir, 'k'), { chain: { key: { hmacSecret: short } } })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringContaining('key.hmacSecret') }),
    );
    try {
      new JsonLinesAuditSink(join(dir, 'k'), { chain: { key: { hmacSecret: short } } });
    } catch (err) {
      expect(String((err as Error).message)).not.toContain(short);
    }
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    });
    expect(
      () => new JsonLinesAuditSink(join(dir, 'k'), { chain: { key: { ed25519PrivateKey: rsa.toString() } } }),
    ).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringContaining('Ed25519') }),
    );
    expect(() => new JsonLinesAuditSink(join(dir, 'k'), { chain: { key, checkpointEvery: 0 } })).toThrow(
      expect.objectContaining({
        code: 'INVALID_CONFIG',
        message: expect.stringContaining('checkpointEvery'),
      }),
    );
  });
});
