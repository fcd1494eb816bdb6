/** Decision logs through the OpenTelemetry logs API, read back with the real SDK's in-memory exporter. */
import { logs } from '@opentelemetry/api-logs';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { afterEach, describe, expect, it } from 'vitest';
import { DECISION_LOG_EVENT, OpenTelemetryLogAuditSink } from '../../src/security/audit-log.js';
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
});
