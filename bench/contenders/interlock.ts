/**
 * Contender `interlock`: `MCPClientManager.executeTool` on the full production path (issue 8): a 1 000-rule
 * `CapabilitySet`, every decision audited to a `MemoryAuditSink` and to the OpenTelemetry API through
 * `OpenTelemetryAuditSink` (no OpenTelemetry SDK registered, so the API is the no-op one), and a tracer from
 * `trace.getTracer('bench')` passed as the manager's `tracer` option. Servers connect with `connectAll`; a
 * server that dies is reconnected by the manager itself.
 */
import { type Tracer, trace } from '@opentelemetry/api';
import type * as Interlock from '../../src/interop/index.js';
import type { MCPClientManagerOptions, MCPServerConfigInput } from '../../src/interop/index.js';
import type * as Security from '../../src/security/index.js';
import type { CapabilitySet, MemoryAuditSink } from '../../src/security/index.js';
import type { ContenderAdapter, ServerSpec, Session } from '../lib/contender.js';
import { benchCapabilities } from '../lib/policy.js';
import { ensureInterlockBuild, importBuild } from '../lib/processes.js';
import { runContender } from '../lib/worker.js';

// The package as users get it: the linked build `npm run build` puts in dist/, not the TypeScript sources
// through tsx, whose esbuild output adds a `__name` call wherever a named function is created. importBuild checks
// that tsx left the build alone too.
const entry = ensureInterlockBuild();
const { MCPClientManager } = await importBuild<typeof Interlock>(entry, 'interop/index.js');
const security = await importBuild<typeof Security>(entry, 'security/index.js');

/** A tracer that counts the spans asked of it, to tell whether the manager took the `tracer` option. */
function countingTracer(inner: Tracer): Tracer & { spans: number } {
  const counting = {
    spans: 0,
    startSpan(...args: Parameters<Tracer['startSpan']>) {
      counting.spans++;
      return inner.startSpan(...args);
    },
    startActiveSpan(...args: unknown[]) {
      counting.spans++;
      return (inner.startActiveSpan as (...a: unknown[]) => unknown)(...args);
    },
  };
  return counting as unknown as Tracer & { spans: number };
}

/**
 * Reconnect at once (no backoff delay), as the other contenders are set up; the default waits a random 0 to
 * 250 ms before the first attempt.
 */
const RECONNECT = { initialDelayMs: 0 };

function configOf(spec: ServerSpec): MCPServerConfigInput {
  return spec.transport === 'stdio'
    ? { name: spec.name, transport: 'stdio', command: spec.command, args: spec.args, reconnect: RECONNECT }
    : { name: spec.name, transport: 'http', url: spec.url, reconnect: RECONNECT };
}

/** The exposed name of the echo tool of `server`. */
const toolName = (server: string) => `mcp__${server}__echo`;

/** Capability sets by server names: the 1 000 rules plus an echo grant per server when there are several. */
const prepared = new Map<string, CapabilitySet>();

function capabilitiesFor(servers: readonly ServerSpec[]): CapabilitySet {
  const key = servers.map((s) => s.name).join(',');
  let set = prepared.get(key);
  if (set === undefined) {
    set = benchCapabilities(security.CapabilitySet, servers.length === 1 ? servers[0]!.name : 'bench');
    if (servers.length > 1) for (const spec of servers) set.grant(`mcp:${spec.name}:echo`, 'execute');
    prepared.set(key, set);
  }
  return set;
}

const tracers = new WeakMap<Session, { tracer: Tracer & { spans: number }; audit: MemoryAuditSink }>();

const interlock: ContenderAdapter = {
  id: 'interlock',
  reconnect: { kind: 'auto' },
  prepare(servers) {
    capabilitiesFor(servers);
  },
  async connect(servers) {
    const audit = new security.MemoryAuditSink();
    const tracer = countingTracer(trace.getTracer('bench'));
    // The `tracerSpans` note tells whether the manager really used the tracer it was given.
    const options: MCPClientManagerOptions = {
      capabilities: capabilitiesFor(servers),
      audit: security.combineAuditSinks(audit, new security.OpenTelemetryAuditSink()),
      tracer,
    };
    const manager = new MCPClientManager(options);
    const connected = await manager.connectAll(servers.map(configOf));
    const failed = Object.entries(connected).filter(([, ok]) => !ok);
    if (failed.length > 0) {
      const why = failed.map(([name]) => `${name}: ${manager.getConnection(name)?.error?.message}`);
      await manager.close();
      throw new Error(`connectAll failed for ${why.join('; ')}`);
    }
    const session: Session = {
      call: (server, text) => manager.executeTool(toolName(server), { text }),
      close: () => manager.close(),
    };
    tracers.set(session, { tracer, audit });
    return session;
  },
  notes(session) {
    const t = tracers.get(session);
    return {
      rules: 1000,
      tracerSpans: t?.tracer.spans ?? 0,
      tracerOption: (t?.tracer.spans ?? 0) > 0 ? 'used' : 'ignored',
      auditRecords: (t?.audit.records.length ?? 0) + (t?.audit.dropped ?? 0),
    };
  },
};

await runContender(interlock);
