/** Decision logs through the OpenTelemetry logs API, read back with the real SDK's in-memory exporter. */
import { logs } from '@opentelemetry/api-logs';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CHECKPOINT_LOG_EVENT,
  DECISION_LOG_EVENT,
  OpenTelemetryLogAuditSink,
} from '../../src/security/audit-log.js';
import { parseAuditLines, verifyAuditChain } from '../../src/security/audit-verify.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { CapabilityGate } from '../../src/security/gate.js';

afterEach(() => {
  logs.disable();
});

describe('OpenTelemetryLogAuditSink', () => {
  it('emits one log record per decision: the record JSON as body, interlock.* attributes, WARN for refusals', async () => {
    const exporter = new InMemoryLogRecordExporter();
    const provider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter })] });
    logs.setGlobalLoggerProvider(provider);
    const caps = new CapabilitySet();
    caps.grant('mcp:fs:read_file', 'execute', { id: 'read' });
    const gate = new CapabilityGate({ capabilities: caps, audit: new OpenTelemetryLogAuditSink() });
    await gate.authorize({
      resource: 'mcp:fs:read_file',
      action: 'execute',
      context: { agent: 'a', principal: 'acme', args: { path: '/secret/plan.txt' } },
    });
    await expect(gate.authorize({ resource: 'mcp:fs:write_file', action: 'execute' })).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
    });
    const records = exporter.getFinishedLogRecords();
    expect(records).toHaveLength(2);
    const [allowed, denied] = records;
    expect(allowed?.eventName).toBe(DECISION_LOG_EVENT);
    expect(allowed?.severityText).toBe('INFO');
    expect(denied?.severityText).toBe('WARN');
    expect(JSON.parse(String(allowed?.body))).toMatchObject({
      resource: 'mcp:fs:read_file',
      allowed: true,
      ruleId: 'read',
      principal: 'acme',
      argumentKeys: ['path'],
    });
    expect(allowed?.attributes).toMatchObject({
      'interlock.resource': 'mcp:fs:read_file',
      'interlock.principal': 'acme',
      'interlock.policy_revision': String(caps.revision),
    });
    expect(JSON.stringify(records.map((r) => [r.body, r.attributes]))).not.toContain('/secret/plan.txt');
    await provider.shutdown();
  });

  it('chains the records it exports: chain attributes, signed checkpoint records, and the bodies verify as a file', async () => {
    const exporter = new InMemoryLogRecordExporter();
    const provider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter })] });
    const key = { hmacSecret: 'a collector-side secret of thirty-two bytes+' };
    const sink = new OpenTelemetryLogAuditSink({
      logger: provider.getLogger('interlock'),
      chain: { key, checkpointEvery: 2 },
    });
    const caps = new CapabilitySet();
    caps.grant('mcp:fs:read_*', 'execute', { id: 'read' });
    const gate = new CapabilityGate({ capabilities: caps, audit: sink });
    for (const tool of ['read_a', 'write_b', 'read_c']) {
      await gate.authorize({ resource: `mcp:fs:${tool}`, action: 'execute' }).catch(() => undefined);
    }
    await sink.close();
    const records = exporter.getFinishedLogRecords();
    expect(records.map((r) => r.eventName)).toEqual([
      DECISION_LOG_EVENT,
      DECISION_LOG_EVENT,
      CHECKPOINT_LOG_EVENT,
      DECISION_LOG_EVENT,
      CHECKPOINT_LOG_EVENT,
    ]);
    expect(records[1]?.attributes).toMatchObject({
      'interlock.resource': 'mcp:fs:write_b',
      'interlock.chain.id': sink.chainId,
      'interlock.chain.seq': 2,
    });
    expect(records[4]?.attributes).toMatchObject({ 'interlock.chain.seq': 3, 'interlock.chain.final': true });
    // What a log pipeline delivers (the bodies, in order) verifies as a trail; one body altered in transit does not.
    const bodies = records.map((r) => String(r.body));
    expect(verifyAuditChain(parseAuditLines(bodies.join('\n')), { key }).ok).toBe(true);
    const altered = bodies.map((b, i) => (i === 1 ? b.replace('"allowed":false', '"allowed":true') : b));
    expect(
      verifyAuditChain(parseAuditLines(altered.join('\n')), { key }).findings.map((f) => [
        f.kind,
        f.at,
        f.seq,
      ]),
    ).toEqual([['edited', 'line 2', 2]]);
    await provider.shutdown();
  });
});
