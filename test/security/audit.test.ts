import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AuditError, ClosedError } from '../../src/errors.js';
import {
  AUDIT_SPAN_EVENT,
  combineAuditSinks,
  JsonLinesAuditSink,
  MemoryAuditSink,
  OpenTelemetryAuditSink,
} from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { CapabilityGate } from '../../src/security/gate.js';
import type { AuditRecord, AuditSink } from '../../src/security/types.js';

function record(n: number, extra: Partial<AuditRecord> = {}): AuditRecord {
  return {
    time: new Date(n).toISOString(),
    resource: `mcp:fs:tool${n}`,
    action: 'execute',
    effect: 'allow',
    allowed: true,
    reason: 'ok',
    argumentKeys: ['path'],
    ...extra,
  };
}

describe('MemoryAuditSink', () => {
  it('keeps the latest records in a ring buffer, oldest first', () => {
    const sink = new MemoryAuditSink({ capacity: 3 });
    for (let i = 1; i <= 5; i++) sink.write(record(i));
    expect(sink.records.map((r) => r.resource)).toEqual(['mcp:fs:tool3', 'mcp:fs:tool4', 'mcp:fs:tool5']);
    expect(sink.dropped).toBe(2);
    expect(Object.isFrozen(sink.records)).toBe(true);
    expect(Object.isFrozen(sink.records[0])).toBe(true);
    sink.clear();
    expect(sink.records).toEqual([]);
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new MemoryAuditSink({ capacity: 0 })).toThrow(/positive integer/);
  });
});

describe('JsonLinesAuditSink', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'interlock-audit-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('appends one JSON line per record, in call order, to a 0600 file it creates', async () => {
    const path = join(dir, 'nested', 'audit.jsonl');
    const sink = new JsonLinesAuditSink(path);
    await Promise.all(Array.from({ length: 20 }, (_, i) => sink.write(record(i))));
    await sink.close();
    await sink.close();
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l).resource)).toEqual(
      Array.from({ length: 20 }, (_, i) => `mcp:fs:tool${i}`),
    );
    if (process.platform !== 'win32') expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('writes lines that arrive in the same turn together, in order, each resolving once it is in the file', async () => {
    const path = join(dir, 'batched.jsonl');
    const sink = new JsonLinesAuditSink(path);
    const inFile = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        sink.write(record(i)).then(async () => (await readFile(path, 'utf8')).includes(`"mcp:fs:tool${i}"`)),
      ),
    );
    await sink.close();
    expect(inFile.every(Boolean)).toBe(true);
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l).resource)).toEqual(
      Array.from({ length: 200 }, (_, i) => `mcp:fs:tool${i}`),
    );
  });

  it('fails every line of a write that fails, and writes the next lines once the file can be opened', async () => {
    const path = join(dir, 'later', 'audit.jsonl');
    await writeFile(join(dir, 'later'), 'a file where the directory should be');
    const sink = new JsonLinesAuditSink(path);
    const settled = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => sink.write(record(i))));
    expect(settled.map((s) => s.status)).toEqual(Array(5).fill('rejected'));
    await rm(join(dir, 'later'));
    await sink.write(record(5));
    await sink.close();
    expect(
      (await readFile(path, 'utf8'))
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).resource),
    ).toEqual(['mcp:fs:tool5']);
  });

  it('appends to an existing file across instances', async () => {
    const path = join(dir, 'append.jsonl');
    await using first = new JsonLinesAuditSink(path);
    await first.write(record(1));
    await first.close();
    await using second = new JsonLinesAuditSink(path);
    await second.write(record(2));
    await second.close();
    expect((await readFile(path, 'utf8')).trimEnd().split('\n')).toHaveLength(2);
  });

  it('rejects writes after close with ClosedError', async () => {
    const sink = new JsonLinesAuditSink(join(dir, 'closed.jsonl'));
    await sink.close();
    await expect(sink.write(record(1))).rejects.toBeInstanceOf(ClosedError);
  });

  it('fails the write when the file cannot be opened, so the gate blocks the call', async () => {
    const sink = new JsonLinesAuditSink(dir); // a directory: open(…, 'a') fails
    const gate = new CapabilityGate({
      capabilities: CapabilitySet.allowAll({ onWarning: () => {} }),
      audit: sink,
    });
    await expect(gate.authorize({ resource: 'mcp:fs:x', action: 'execute' })).rejects.toBeInstanceOf(
      AuditError,
    );
    await sink.close();
  });
});

describe('OpenTelemetryAuditSink', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('test');
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  });
  afterEach(() => exporter.reset());
  afterAll(() => {
    context.disable();
  });

  it('adds a decision event to the active span, with names but never values of arguments', async () => {
    const caps = new CapabilitySet();
    caps.deny('mcp:fs:rm', 'execute', { id: 'no-rm' });
    const gate = new CapabilityGate({ capabilities: caps, audit: new OpenTelemetryAuditSink() });
    await tracer.startActiveSpan('agent.step', async (span) => {
      await gate
        .authorize({
          resource: 'mcp:fs:rm',
          action: 'execute',
          context: { args: { path: '/top-secret' }, agent: 'a1' },
          server: 'fs',
          tool: 'rm',
        })
        .catch(() => undefined);
      span.end();
    });
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('agent.step');
    expect(span?.events).toHaveLength(1);
    expect(span?.events[0]?.name).toBe(AUDIT_SPAN_EVENT);
    expect(span?.events[0]?.attributes).toMatchObject({
      'interlock.resource': 'mcp:fs:rm',
      'interlock.action': 'execute',
      'interlock.effect': 'deny',
      'interlock.allowed': false,
      'interlock.rule_id': 'no-rm',
      'interlock.agent': 'a1',
      'interlock.server': 'fs',
      'interlock.tool': 'rm',
      'interlock.argument_keys': ['path'],
    });
    expect(JSON.stringify(span?.events)).not.toContain('top-secret');
  });

  it('records on a span of its own when no span is active', () => {
    new OpenTelemetryAuditSink({ tracer }).write(record(7));
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).toEqual([AUDIT_SPAN_EVENT]);
    expect(spans[0]?.events[0]?.attributes?.['interlock.resource']).toBe('mcp:fs:tool7');
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});

describe('combineAuditSinks', () => {
  it('writes to every sink, and fails with AuditError after trying all when one fails', async () => {
    const a = new MemoryAuditSink();
    const b = new MemoryAuditSink();
    const broken: AuditSink = {
      write() {
        throw new Error('nope');
      },
    };
    await combineAuditSinks(a, b).write(record(1));
    expect(a.records).toHaveLength(1);
    expect(b.records).toHaveLength(1);
    await expect(combineAuditSinks(a, broken, b).write(record(2))).rejects.toBeInstanceOf(AuditError);
    expect(b.records).toHaveLength(2);
  });
});
