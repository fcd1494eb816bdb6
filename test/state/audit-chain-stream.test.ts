/**
 * A chained audit trail on the Redis stream of a fleet (issue 40): two real processes write one stream of a real
 * redis-server, each under its own chain; the stream verifies, and each way of tampering with it (deleting, editing,
 * reordering or inserting entries, cutting the tail, forging a checkpoint) is named by stream id, chain and seq.
 */

import { tmpdir } from 'node:os';
import { Redis } from 'ioredis';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { verifyAuditChain } from '../../src/security/audit-verify.js';
import { readAuditStream } from '../../src/state/audit-stream.js';
import { RedisStateStore } from '../../src/state/redis.js';
import { redisForFile, runStateWorker } from '../helpers/redis.js';

const redisServer = redisForFile();
const SECRET = 'the fleet audit secret, thirty-two bytes or more';
const key = { hmacSecret: SECRET };

let prefixes = 0;
const open: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((c) => c.close()));
});

type Entry = [id: string, fields: string[]];

// Two worker processes write 6 decisions each to one stream, once for the file; each test tampers with a copy.
let written: { prefix: string; chains: string[] };
beforeAll(async () => {
  const prefix = 'fleet:';
  process.env.INTERLOCK_AUDIT_KEY = SECRET;
  const outs = await Promise.all([
    runStateWorker('audit-worker', [redisServer.current.url, prefix, '6']),
    runStateWorker('audit-worker', [redisServer.current.url, prefix, '6']),
  ]);
  written = { prefix, chains: outs.map((out) => out.trim()) };
});

/** A copy of the fleet's stream under a fresh prefix, with raw access to it and a verifier. */
async function fleetTrail() {
  const prefix = `audit${++prefixes}:`;
  const raw = new Redis(redisServer.current.url, { keyPrefix: prefix });
  // COPY's keys would both get the client's prefix: a client without one copies between prefixes.
  const plain = new Redis(redisServer.current.url);
  await plain.copy(`${written.prefix}stream:audit`, `${prefix}stream:audit`);
  await plain.quit();
  const store = await RedisStateStore.connect({ url: redisServer.current.url, keyPrefix: prefix });
  open.push(store, { close: () => raw.quit() });
  const entries = async () => (await raw.xrange('stream:audit', '-', '+')) as Entry[];
  /** Replaces the stream with `list` (same ids where given), as someone with write access to Redis could. */
  const rewrite = async (list: readonly Entry[]) => {
    await raw.del('stream:audit');
    for (const [id, fields] of list) await raw.xadd('stream:audit', id, ...fields);
  };
  const verify = async () => {
    const trail = await readAuditStream(store);
    return verifyAuditChain(trail.entries, { key, trimmedHead: trail.trimmedHead });
  };
  return { chains: written.chains, raw, entries, rewrite, verify };
}

const chainOf = ([, fields]: Entry) =>
  (JSON.parse(fields[1] as string) as { chain?: { id: string; seq: number }; id?: string }).chain;
const found = (report: Awaited<ReturnType<Awaited<ReturnType<typeof fleetTrail>>['verify']>>) =>
  report.findings.map((f) => `${f.kind}@${f.at}:${f.chain}#${f.seq}`);

describe('a chained audit trail on a Redis stream', () => {
  it('holds one chain per process, each sealed and verified', async () => {
    const { chains, verify, entries } = await fleetTrail();
    const report = await verify();
    expect(report.findings).toEqual([]);
    expect(report.chains.map((c) => [c.id, c.records, c.checkpoints, c.sealed]).sort()).toEqual(
      chains.map((id) => [id, 6, 2, true]).sort(),
    );
    expect(report.entries).toBe((await entries()).length);
  });

  it('names a deleted entry (XDEL) by the stream id after the gap, its chain and seq', async () => {
    const { chains, raw, entries, verify } = await fleetTrail();
    const list = await entries();
    const victim = list.findIndex((e) => chainOf(e)?.id === chains[1] && chainOf(e)?.seq === 3);
    const next = list.findIndex((e) => chainOf(e)?.id === chains[1] && chainOf(e)?.seq === 4);
    await raw.xdel('stream:audit', (list[victim] as Entry)[0]);
    expect(found(await verify())).toEqual([`deleted@stream id ${(list[next] as Entry)[0]}:${chains[1]}#3`]);
  });

  it('names an edited entry of a rebuilt stream by its stream id', async () => {
    const { chains, entries, rewrite, verify } = await fleetTrail();
    const list = await entries();
    const at = list.findIndex((e) => chainOf(e)?.id === chains[0] && chainOf(e)?.seq === 3);
    const [id, fields] = list[at] as Entry;
    const edited: Entry[] = [...list];
    edited[at] = [
      id,
      [fields[0] as string, (fields[1] as string).replace('"allowed":false', '"allowed":true')],
    ];
    expect(fields[1]).toContain('"allowed":false');
    await rewrite(edited);
    expect(found(await verify())).toEqual([`edited@stream id ${id}:${chains[0]}#3`]);
  });

  it('names reordered and inserted entries of a rebuilt stream', async () => {
    const { chains, entries, rewrite, verify } = await fleetTrail();
    const list = await entries();
    const one = list.filter((e) => chainOf(e)?.id === chains[0]);
    const [a, b] = [list.indexOf(one[0] as Entry), list.indexOf(one[1] as Entry)];
    // Same ids, contents swapped: seq 2 now stored before seq 1.
    const swapped: Entry[] = list.map((e, i) =>
      i === a ? [e[0], (list[b] as Entry)[1]] : i === b ? [e[0], (list[a] as Entry)[1]] : e,
    );
    await rewrite(swapped);
    expect(found(await verify())).toEqual([
      `reordered@stream id ${(list[a] as Entry)[0]}:${chains[0]}#2`,
      `reordered@stream id ${(list[b] as Entry)[0]}:${chains[0]}#1`,
    ]);
    // A copy of an entry appended at the end (XADD *).
    await rewrite([...list, ['*', (list[b] as Entry)[1]]]);
    const report = await verify();
    expect(report.findings.map((f) => [f.kind, f.chain, f.seq])).toEqual([['inserted', chains[0], 2]]);
  });

  it("catches a tail cut from one process's chain, with its final checkpoint", async () => {
    const { chains, raw, entries, verify } = await fleetTrail();
    const list = await entries();
    const mine = list.filter((e) => {
      const text = e[1][1] as string;
      return text.includes(`"id":"${chains[0]}"`) || text.includes(`"chain":"${chains[0]}"`);
    });
    // Its last two records and the final checkpoint go; the checkpoint at seq 4 stays.
    const cut = mine.slice(-3);
    await raw.xdel('stream:audit', ...cut.map((e) => e[0]));
    const report = await verify();
    const last = mine[mine.length - 4] as Entry;
    expect(found(report)).toEqual([`unsealed@stream id ${last[0]}:${chains[0]}#4`]);
    expect(report.findings[0]?.message).toContain('the last signed checkpoint covers seq 4');
  });

  it('names a forged checkpoint by its stream id', async () => {
    const { chains, entries, rewrite, verify } = await fleetTrail();
    const list = await entries();
    const at = list.findIndex(
      (e) => e[1][0] === 'checkpoint' && (e[1][1] as string).includes(chains[1] as string),
    );
    const [id, fields] = list[at] as Entry;
    const cp = JSON.parse(fields[1] as string) as { seq: number; sig: string };
    const forged: Entry[] = [...list];
    forged[at] = [
      id,
      ['checkpoint', JSON.stringify({ ...cp, sig: cp.sig.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) })],
    ];
    await rewrite(forged);
    expect(found(await verify())).toEqual([`forged-checkpoint@stream id ${id}:${chains[1]}#${cp.seq}`]);
  });

  it('interlock audit verify --redis names the deleted entry too, and exits 1', async () => {
    const { chains, raw, entries } = await fleetTrail();
    const prefix = (raw.options.keyPrefix as string) ?? '';
    const run = async () => {
      let stdout = '';
      const code = await main(
        [
          'audit',
          'verify',
          '--redis',
          redisServer.current.url,
          '--key-prefix',
          prefix,
          '--key-env',
          'K',
          '--json',
        ],
        {
          stdout: { write: (c: string) => (stdout += c), isTTY: false, columns: 120 },
          stderr: { write: () => true, isTTY: false, columns: 120 },
          env: { K: SECRET },
          cwd: tmpdir(),
        },
      );
      return {
        code,
        report: JSON.parse(stdout) as { ok: boolean; trails: { source: string; findings: unknown[] }[] },
      };
    };
    const clean = await run();
    expect(clean.code).toBe(0);
    expect(clean.report.trails).toMatchObject([{ source: 'redis stream audit', findings: [] }]);
    const list = await entries();
    const victim = list.find((e) => chainOf(e)?.id === chains[0] && chainOf(e)?.seq === 5) as Entry;
    await raw.xdel('stream:audit', victim[0]);
    const tampered = await run();
    expect(tampered.code).toBe(1);
    expect(tampered.report.trails[0]?.findings).toMatchObject([
      { kind: 'deleted', chain: chains[0], seq: 5 },
    ]);
  });
});
