/**
 * Verifying a chained audit trail (issue 40): every chain in a file, a Redis stream or any list of entries is
 * walked in the order it was stored. A record whose content does not match its hash was edited; a gap in the
 * sequence is a deletion; a sequence number out of order is a reordering; a duplicate, a record without chain
 * fields, or one after the final checkpoint is an insertion; a checkpoint whose signature fails was forged (or
 * the key is wrong); a head that no longer matches a signed checkpoint means records before it were rewritten
 * (hashes recomputed); a checkpoint beyond the last record, or no final checkpoint, means the tail was cut.
 */
import { isJsonObject } from '../json.js';
import {
  AUDIT_CHAIN_GENESIS,
  type AuditCheckpoint,
  type AuditVerifyKey,
  auditRecordHash,
  checkpointVerifier,
} from './audit-chain.js';

/** One stored entry of a trail: a parsed JSON value and where it was (`line 12`, `stream id 1700000000000-0`). */
export interface AuditTrailEntry {
  readonly at: string;
  readonly value: unknown;
  /** Set when the entry could not be read as JSON: why. */
  readonly unreadable?: string | undefined;
}

/** What kind of tampering a finding shows. */
export type AuditFindingKind =
  | 'edited'
  | 'deleted'
  | 'reordered'
  | 'inserted'
  | 'truncated'
  | 'forged-checkpoint'
  | 'unsealed'
  | 'unreadable';

/** One problem: what, where, in which chain and at which sequence number. */
export interface AuditFinding {
  readonly kind: AuditFindingKind;
  /** Where in the trail: `line 12`, `stream id 1700000000000-0`. */
  readonly at: string;
  readonly chain?: string | undefined;
  readonly seq?: number | undefined;
  readonly message: string;
}

/** What was found of one chain. */
export interface AuditChainSummary {
  readonly id: string;
  readonly records: number;
  readonly firstSeq: number;
  readonly lastSeq: number;
  /** Checkpoints whose signature verified. */
  readonly checkpoints: number;
  /** The highest sequence number a verified checkpoint signs, if any. */
  readonly lastCheckpoint: number | undefined;
  /** Whether the chain's final checkpoint (written on close) is there. */
  readonly sealed: boolean;
}

/** The result of {@link verifyAuditChain}: `ok` when there is no finding. */
export interface AuditVerifyReport {
  readonly ok: boolean;
  readonly entries: number;
  readonly chains: readonly AuditChainSummary[];
  readonly findings: readonly AuditFinding[];
}

/** Options of {@link verifyAuditChain}. */
export interface VerifyAuditChainOptions {
  /** The key checkpoints were signed with (HMAC secret), or the Ed25519 public key. */
  key: AuditVerifyKey;
  /**
   * Chains may still be written (a live process): a chain without its final checkpoint is no finding, and its
   * records after the last checkpoint are only as good as their hashes. @default false
   */
  open?: boolean | undefined;
  /**
   * The trail's head may have been trimmed (a bounded Redis stream that dropped its oldest entries): a chain may
   * start after seq 1. @default false
   */
  trimmedHead?: boolean | undefined;
}

interface LinkedEntry {
  readonly at: string;
  readonly seq: number;
  readonly prev: string;
  readonly hash: string;
  readonly intact: boolean;
}

interface ChainEntries {
  readonly records: LinkedEntry[];
  readonly checkpoints: { at: string; cp: AuditCheckpoint }[];
  lastAt: string;
}

const short = (id: string) => id.slice(0, 8);

function asLink(value: unknown): { id: string; seq: number; prev: string; hash: string } | undefined {
  if (!isJsonObject(value)) return undefined;
  const { id, seq, prev, hash } = value;
  if (typeof id !== 'string' || typeof prev !== 'string' || typeof hash !== 'string') return undefined;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) return undefined;
  return { id, seq, prev, hash };
}

function asCheckpoint(value: unknown): AuditCheckpoint | undefined {
  if (!isJsonObject(value)) return undefined;
  const { alg, chain, seq, head, time, final, sig } = value;
  if (alg !== 'hmac-sha256' && alg !== 'ed25519') return undefined;
  if (typeof chain !== 'string' || typeof head !== 'string' || typeof time !== 'string') return undefined;
  if (typeof sig !== 'string' || typeof final !== 'boolean') return undefined;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) return undefined;
  return { alg, chain, seq, head, time, final, sig };
}

/** `a` or `a–b` for each run of consecutive numbers. */
function ranges(seqs: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < seqs.length; ) {
    let j = i;
    while (j + 1 < seqs.length && seqs[j + 1] === (seqs[j] as number) + 1) j++;
    out.push(i === j ? String(seqs[i]) : `${seqs[i]}–${seqs[j]}`);
    i = j + 1;
  }
  return out.join(', ');
}

/**
 * Checks every chain in `entries` (in stored order) and names each problem where it is. Entries of chains that
 * were never chained (no `chain` fields) are findings too: a chained trail holds nothing else. Throws
 * `INVALID_CONFIG` for a key that is not one.
 */
export function verifyAuditChain(
  entries: Iterable<AuditTrailEntry>,
  options: VerifyAuditChainOptions,
): AuditVerifyReport {
  const verifies = checkpointVerifier(options.key);
  const findings: AuditFinding[] = [];
  const chains = new Map<string, ChainEntries>();
  const chainOf = (id: string, at: string) => {
    let c = chains.get(id);
    if (c === undefined) {
      c = { records: [], checkpoints: [], lastAt: at };
      chains.set(id, c);
    }
    c.lastAt = at;
    return c;
  };
  let count = 0;
  for (const { at, value, unreadable } of entries) {
    count++;
    if (unreadable !== undefined || !isJsonObject(value)) {
      findings.push({ kind: 'unreadable', at, message: unreadable ?? 'not a JSON object' });
      continue;
    }
    if ('checkpoint' in value) {
      const cp = asCheckpoint(value.checkpoint);
      if (cp === undefined) {
        findings.push({
          kind: 'forged-checkpoint',
          at,
          message: 'a checkpoint with missing or malformed fields',
        });
      } else {
        chainOf(cp.chain, at).checkpoints.push({ at, cp });
      }
      continue;
    }
    const link = asLink(value.chain);
    if (link === undefined) {
      findings.push({ kind: 'inserted', at, message: 'a record without chain fields in a chained trail' });
      continue;
    }
    const { chain: _chain, ...body } = value;
    const intact = auditRecordHash(body, link) === link.hash;
    chainOf(link.id, at).records.push({ at, seq: link.seq, prev: link.prev, hash: link.hash, intact });
  }

  const summaries: AuditChainSummary[] = [];
  for (const [id, chain] of chains) {
    summaries.push(checkChain(id, chain, verifies, options, findings));
  }
  return Object.freeze({
    ok: findings.length === 0,
    entries: count,
    chains: Object.freeze(summaries),
    findings: Object.freeze(findings),
  });
}

function checkChain(
  id: string,
  chain: ChainEntries,
  verifies: (cp: AuditCheckpoint) => boolean,
  options: VerifyAuditChainOptions,
  findings: AuditFinding[],
): AuditChainSummary {
  const found = (kind: AuditFindingKind, at: string, seq: number | undefined, message: string) =>
    findings.push({ kind, at, chain: id, seq, message });
  const present = new Set(chain.records.map((r) => r.seq));
  const first = chain.records[0];
  const trimmed = options.trimmedHead === true && first !== undefined;
  let lastSeq = trimmed ? first.seq - 1 : 0;
  let last: LinkedEntry | undefined;
  let lastHash = trimmed ? first.prev : AUDIT_CHAIN_GENESIS;
  const accepted = new Map<number, LinkedEntry>();
  const seen = new Set<number>();
  for (const rec of chain.records) {
    if (!rec.intact)
      found('edited', rec.at, rec.seq, `seq ${rec.seq} was edited: its content no longer matches its hash`);
    if (rec.seq > lastSeq) {
      if (rec.seq === lastSeq + 1) {
        if (rec.prev !== lastHash && lastSeq === 0) {
          found('edited', rec.at, rec.seq, `seq ${rec.seq} does not link to the start of the chain`);
        } else if (rec.prev !== lastHash) {
          found(
            'edited',
            last?.at ?? rec.at,
            lastSeq,
            `seq ${lastSeq} was replaced: seq ${rec.seq} (${rec.at}) links to a different record`,
          );
        }
      } else {
        const missing: number[] = [];
        for (let s = lastSeq + 1; s < rec.seq; s++) missing.push(s);
        const later = missing.filter((s) => present.has(s));
        const gone = missing.filter((s) => !present.has(s));
        if (later.length > 0) {
          found(
            'reordered',
            rec.at,
            rec.seq,
            `seq ${rec.seq} comes before seq ${ranges(later)}, stored after it`,
          );
        }
        if (gone.length > 0) {
          const where = last === undefined ? `before ${rec.at}` : `between ${last.at} and ${rec.at}`;
          found(
            'deleted',
            rec.at,
            gone[0],
            `seq ${ranges(gone)} ${gone.length === 1 ? 'is' : 'are'} missing ${where}`,
          );
        }
      }
      lastSeq = rec.seq;
      lastHash = rec.hash;
      last = rec;
      accepted.set(rec.seq, rec);
    } else if (seen.has(rec.seq)) {
      found(
        'inserted',
        rec.at,
        rec.seq,
        `a second record with seq ${rec.seq} (inserted, or the original of a replaced one)`,
      );
    } else {
      found('reordered', rec.at, rec.seq, `seq ${rec.seq} is stored after seq ${lastSeq}`);
    }
    seen.add(rec.seq);
  }

  const valid: { at: string; cp: AuditCheckpoint }[] = [];
  for (const c of chain.checkpoints) {
    if (verifies(c.cp)) valid.push(c);
    else {
      found(
        'forged-checkpoint',
        c.at,
        c.cp.seq,
        `the checkpoint for seq ${c.cp.seq} does not verify under the given key (forged, altered, or signed with another key)`,
      );
    }
  }
  valid.sort((a, b) => a.cp.seq - b.cp.seq);
  const maxSeq = chain.records.reduce((m, r) => Math.max(m, r.seq), 0);
  let signedTo = 0;
  let previous = 0;
  for (const { at, cp } of valid) {
    const rec = accepted.get(cp.seq);
    if (rec === undefined) {
      // A trimmed stream can keep a checkpoint whose records were all trimmed before it.
      if (cp.seq > maxSeq && !(options.trimmedHead === true && chain.records.length === 0)) {
        const cut = maxSeq + 1 === cp.seq ? `seq ${cp.seq} was` : `seq ${maxSeq + 1}–${cp.seq} were`;
        found(
          'truncated',
          at,
          cp.seq,
          `the trail was cut: this checkpoint signs ${cp.seq} records, ${cut} removed`,
        );
      }
      // Otherwise the gap that removed it is already a finding.
    } else if (rec.hash !== cp.head) {
      found(
        'edited',
        at,
        cp.seq,
        `records between seq ${previous + 1} and ${cp.seq} were rewritten: they no longer lead to the head this checkpoint signed`,
      );
    }
    previous = cp.seq;
    signedTo = Math.max(signedTo, cp.seq);
  }
  const final = valid.find((c) => c.cp.final);
  if (final !== undefined) {
    for (const rec of chain.records) {
      if (rec.seq > final.cp.seq) {
        found(
          'inserted',
          rec.at,
          rec.seq,
          `seq ${rec.seq} comes after the chain's final checkpoint (${final.at})`,
        );
      }
    }
  } else if (options.open !== true) {
    const signed =
      signedTo === 0 ? 'no signed checkpoint' : `the last signed checkpoint covers seq ${signedTo}`;
    found(
      'unsealed',
      chain.lastAt,
      maxSeq,
      `chain ${short(id)} has no final checkpoint: its tail may have been cut after seq ${maxSeq} (${signed})`,
    );
  }
  return Object.freeze({
    id,
    records: chain.records.length,
    firstSeq: first?.seq ?? 0,
    lastSeq: maxSeq,
    checkpoints: valid.length,
    lastCheckpoint: signedTo === 0 ? undefined : signedTo,
    sealed: final !== undefined,
  });
}

/** The entries of a JSON-lines audit file, numbered by line (blank lines are skipped). */
export function parseAuditLines(text: string): AuditTrailEntry[] {
  const out: AuditTrailEntry[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.trim() === '') continue;
    const at = `line ${i + 1}`;
    try {
      out.push({ at, value: JSON.parse(line) });
    } catch {
      out.push({ at, value: undefined, unreadable: 'not valid JSON' });
    }
  }
  return out;
}
