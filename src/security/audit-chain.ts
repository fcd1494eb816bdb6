/**
 * A tamper-evident audit trail (issue 40): each chained sink gives every record a chain id (one per process and
 * sink), a sequence number, the hash of the record before it and its own hash over its canonical JSON; every N
 * records, every T seconds and on close it writes a checkpoint that signs (chain id, sequence, head hash) with a
 * configured key. `verifyAuditChain` (audit-verify.ts) checks both.
 *
 * The hashes alone prove nothing against someone who can write the trail (they can recompute them); the signed
 * checkpoints do: a record edited, deleted, inserted or reordered before the last checkpoint no longer leads to
 * the head that checkpoint signed, and the final checkpoint written on close says where the trail ends.
 */
import {
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  KeyObject,
  randomUUID,
  sign,
  timingSafeEqual,
  verify,
} from 'node:crypto';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { once } from '../lazy.js';
import { describeIssues, toConfigIssues } from '../zod-issues.js';
import { canonicalJson } from './pinning.js';
import type { AuditRecord } from './types.js';

/** How many records a chain writes between two checkpoints by default. */
export const DEFAULT_CHECKPOINT_EVERY = 100;
/** How long a chain with new records waits for a checkpoint by default (milliseconds). */
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 60_000;
/** The `prev` of a chain's first record: 64 zeros. */
export const AUDIT_CHAIN_GENESIS = '0'.repeat(64);
/** The shortest HMAC secret accepted, in bytes (as long as the SHA-256 output). */
export const MIN_HMAC_SECRET_BYTES = 32;
/** Prefixed to every signed checkpoint, so its signature cannot be replayed as anything else. */
const CHECKPOINT_DOMAIN = 'interlock-audit-checkpoint/1\n';

/** Signature algorithms of checkpoints. */
export type AuditCheckpointAlgorithm = 'hmac-sha256' | 'ed25519';

/** The chain fields a chained record carries (the `chain` member of its JSON). */
export interface AuditChainLink {
  /** The chain: one per process and sink. */
  readonly id: string;
  /** 1 for the chain's first record, then one more for each record. */
  readonly seq: number;
  /** `hash` of the record before, or {@link AUDIT_CHAIN_GENESIS} for the first. */
  readonly prev: string;
  /** Hex SHA-256 of the record's canonical JSON with `chain` holding `id`, `seq` and `prev` only. */
  readonly hash: string;
}

/** An audit record as a chained sink writes it. */
export type ChainedAuditRecord = AuditRecord & { readonly chain: AuditChainLink };

/** A signed statement that a chain had `seq` records ending in `head` (the `checkpoint` member of its JSON). */
export interface AuditCheckpoint {
  readonly alg: AuditCheckpointAlgorithm;
  readonly chain: string;
  readonly seq: number;
  readonly head: string;
  readonly time: string;
  /** True on the checkpoint written by `close()`: the chain ends here. */
  readonly final: boolean;
  /** base64url signature over the other fields. */
  readonly sig: string;
}

/** The chain's schemas, built on first use (importing the security area builds no schema: issue 15). */
const chainSchemas = once(() => {
  const key = z.union([
    z.strictObject({
      hmacSecret: z
        .union([z.string(), z.instanceof(Uint8Array)])
        .refine(
          (s) => (typeof s === 'string' ? Buffer.byteLength(s) : s.byteLength) >= MIN_HMAC_SECRET_BYTES,
          `an HMAC secret needs at least ${MIN_HMAC_SECRET_BYTES} bytes (e.g. openssl rand -base64 48)`,
        )
        .describe('The HMAC-SHA256 secret checkpoints are signed with.'),
    }),
    z.strictObject({
      ed25519PrivateKey: z
        .union([
          z.string().min(1),
          z.custom<KeyObject>((v) => v instanceof KeyObject, 'expected PEM text or a KeyObject'),
        ])
        .describe('The Ed25519 private key (PEM text or a KeyObject) checkpoints are signed with.'),
    }),
  ]);

  // Options of an AuditChain (the `chain` option of every chaining sink).
  const options = z.strictObject({
    key: key.describe('The key checkpoints are signed with: { hmacSecret } or { ed25519PrivateKey }.'),
    checkpointEvery: z
      .number()
      .int()
      .min(1)
      .default(DEFAULT_CHECKPOINT_EVERY)
      .describe(`Records between two checkpoints. Default ${DEFAULT_CHECKPOINT_EVERY}.`),
    checkpointIntervalMs: z
      .number()
      .int()
      .min(10)
      .default(DEFAULT_CHECKPOINT_INTERVAL_MS)
      .describe(
        `Milliseconds after which new records get a checkpoint even if fewer than checkpointEvery were written. Default ${DEFAULT_CHECKPOINT_INTERVAL_MS}.`,
      ),
  });
  return { key, options };
});

/** Options of an {@link AuditChain}. */
export type AuditChainOptions = z.input<ReturnType<typeof chainSchemas>['options']>;

/** What a verifier needs: the HMAC secret, or the Ed25519 public key (a private key works too). */
export type AuditVerifyKey =
  | { readonly hmacSecret: string | Uint8Array }
  | { readonly ed25519PublicKey: string | KeyObject };

/** Signs and checks checkpoints under one key. */
interface CheckpointSigner {
  readonly alg: AuditCheckpointAlgorithm;
  sign(payload: string): string;
}

function invalid(what: string, error: z.ZodError): ConfigError {
  const issues = toConfigIssues(error);
  return new ConfigError(`Invalid ${what}: ${describeIssues(issues)}.`, { issues });
}

function ed25519Key(value: string | KeyObject, kind: 'private' | 'public', path: string): KeyObject {
  let key: KeyObject | undefined;
  let cause: unknown;
  try {
    // createPublicKey takes a private key too, and derives its public half.
    key =
      value instanceof KeyObject
        ? value
        : kind === 'private'
          ? createPrivateKey(value)
          : createPublicKey(value);
  } catch (err) {
    cause = err;
  }
  if (
    key === undefined ||
    key.asymmetricKeyType !== 'ed25519' ||
    (kind === 'private' && key.type !== 'private')
  ) {
    // Never the key's text: only what kind of key was expected.
    throw new ConfigError(`${path} is not an Ed25519 ${kind} key in PEM form.`, {
      issues: [{ path, message: `expected an Ed25519 ${kind} key (openssl genpkey -algorithm ed25519)` }],
      cause,
    });
  }
  return key;
}

function signerFor(key: z.output<ReturnType<typeof chainSchemas>['key']>): CheckpointSigner {
  if ('hmacSecret' in key) {
    const secret = key.hmacSecret;
    return {
      alg: 'hmac-sha256',
      sign: (payload) => createHmac('sha256', secret).update(payload, 'utf8').digest('base64url'),
    };
  }
  const privateKey = ed25519Key(key.ed25519PrivateKey, 'private', 'key.ed25519PrivateKey');
  return {
    alg: 'ed25519',
    sign: (payload) => sign(null, Buffer.from(payload, 'utf8'), privateKey).toString('base64url'),
  };
}

/** The bytes a checkpoint's signature covers. */
function checkpointPayload(cp: Omit<AuditCheckpoint, 'sig'>): string {
  const { alg, chain, seq, head, time, final } = cp;
  return CHECKPOINT_DOMAIN + canonicalJson({ alg, chain, seq, head, time, final });
}

/** Hex SHA-256 of a record's canonical JSON, `chain` holding `id`, `seq` and `prev` (not `hash`). */
export function auditRecordHash(
  record: Readonly<Record<string, unknown>>,
  link: Omit<AuditChainLink, 'hash'>,
): string {
  const { id, seq, prev } = link;
  return createHash('sha256')
    .update(canonicalJson({ ...record, chain: { id, seq, prev } }), 'utf8')
    .digest('hex');
}

/**
 * Makes a checker of checkpoint signatures for `key`; throws `INVALID_CONFIG` for a key that is not one. The check
 * compares in constant time and is false for a checkpoint signed with another algorithm.
 */
export function checkpointVerifier(key: AuditVerifyKey): (cp: AuditCheckpoint) => boolean {
  if ('hmacSecret' in key) {
    const parsed = chainSchemas().key.safeParse({ hmacSecret: key.hmacSecret });
    if (!parsed.success) throw invalid('audit verification key', parsed.error);
    const signer = signerFor(parsed.data);
    return (cp) => {
      if (cp.alg !== 'hmac-sha256' || typeof cp.sig !== 'string') return false;
      const expected = Buffer.from(signer.sign(checkpointPayload(cp)));
      const given = Buffer.from(cp.sig);
      return expected.length === given.length && timingSafeEqual(expected, given);
    };
  }
  const key0 = ed25519Key(key.ed25519PublicKey, 'public', 'ed25519PublicKey');
  const publicKey = key0.type === 'private' ? createPublicKey(key0) : key0;
  return (cp) => {
    if (cp.alg !== 'ed25519' || typeof cp.sig !== 'string') return false;
    try {
      return verify(
        null,
        Buffer.from(checkpointPayload(cp), 'utf8'),
        publicKey,
        Buffer.from(cp.sig, 'base64url'),
      );
    } catch {
      return false;
    }
  };
}

/** What {@link AuditChain.link} gives a sink to write. */
export interface LinkedAuditRecord {
  /** The record with its `chain` fields: write `JSON.stringify(entry)`. */
  readonly entry: ChainedAuditRecord;
  /** A checkpoint due after this record (every `checkpointEvery` records), to write after it. */
  readonly checkpoint: AuditCheckpoint | undefined;
}

/**
 * The chain of one sink in one process. `link` adds the chain fields to each record in the order the sink writes
 * them; a timer (unref'd, so it never keeps a process alive) hands `onCheckpoint` a checkpoint when new records
 * waited `checkpointIntervalMs`; `close()` returns the final checkpoint. Throws `INVALID_CONFIG` for bad options.
 */
export class AuditChain {
  /** A random id, new for each chain. */
  readonly id = randomUUID();
  readonly #signer: CheckpointSigner;
  readonly #every: number;
  readonly #timer: NodeJS.Timeout | undefined;
  #seq = 0;
  #head = AUDIT_CHAIN_GENESIS;
  #signedSeq = 0;
  #closed = false;

  constructor(options: AuditChainOptions, onCheckpoint?: (checkpoint: AuditCheckpoint) => void) {
    const parsed = chainSchemas().options.safeParse(options);
    if (!parsed.success) throw invalid('audit chain options', parsed.error);
    this.#signer = signerFor(parsed.data.key);
    this.#every = parsed.data.checkpointEvery;
    if (onCheckpoint !== undefined) {
      this.#timer = setInterval(() => {
        const cp = this.checkpoint();
        if (cp !== undefined) onCheckpoint(cp);
      }, parsed.data.checkpointIntervalMs);
      this.#timer.unref();
    }
  }

  /** How many records the chain holds. */
  get seq(): number {
    return this.#seq;
  }

  /** Links `record` as the chain's next one. */
  link(record: AuditRecord): LinkedAuditRecord {
    // The hash covers the JSON the sink writes, read back: exactly what a verifier will parse.
    const body = JSON.parse(JSON.stringify(record)) as Record<string, unknown>;
    const link = { id: this.id, seq: this.#seq + 1, prev: this.#head };
    const hash = auditRecordHash(body, link);
    this.#seq = link.seq;
    this.#head = hash;
    const entry = { ...body, chain: { ...link, hash } } as unknown as ChainedAuditRecord;
    const due = this.#seq - this.#signedSeq >= this.#every;
    return { entry, checkpoint: due ? this.checkpoint() : undefined };
  }

  /**
   * A checkpoint over the records so far, or `undefined` when none came since the last one (a final one is always
   * made, unless the chain is empty).
   */
  checkpoint(final = false): AuditCheckpoint | undefined {
    if (this.#seq === 0 || (this.#seq === this.#signedSeq && !final)) return undefined;
    this.#signedSeq = this.#seq;
    const unsigned = {
      alg: this.#signer.alg,
      chain: this.id,
      seq: this.#seq,
      head: this.#head,
      time: new Date().toISOString(),
      final,
    };
    return { ...unsigned, sig: this.#signer.sign(checkpointPayload(unsigned)) };
  }

  /** Stops the timer and returns the final checkpoint (once; `undefined` for an empty chain or a second call). */
  close(): AuditCheckpoint | undefined {
    if (this.#closed) return undefined;
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    return this.checkpoint(true);
  }
}
