/**
 * The gateway's metrics in Prometheus text format (issue 17), on a registry of its own (prom-client's global
 * registry is never touched, so importing the package registers nothing). Calls by server, tool and outcome,
 * denials, latency, requests refused before any MCP message (401/403), and upstream health and the callers' flow
 * states held (issue 42), read at scrape time.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { MCPClientManager } from '../interop/manager.js';
import type { GatewayCallObserver } from './server.js';

/** Latency buckets in seconds: from a cached lookup to a slow remote tool. */
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class GatewayMetrics implements GatewayCallObserver {
  readonly #registry = new Registry();
  readonly #calls: Counter<'server' | 'tool' | 'outcome'>;
  readonly #denials: Counter<'server' | 'tool'>;
  readonly #latency: Histogram<'server' | 'outcome'>;
  readonly #rejected: Counter<'status'>;

  /**
   * `flowStates` reads how many callers' flow states the gateway holds (issue 42); `routed`, the rounds routed
   * between replicas (issue 41).
   */
  constructor(
    manager: MCPClientManager,
    options: {
      flowStates?: (() => number) | undefined;
      routed?: (() => { forwarded: number; served: number }) | undefined;
    } = {},
  ) {
    const registers = [this.#registry];
    this.#calls = new Counter({
      name: 'interlock_gateway_calls_total',
      help: 'Tool calls through the gateway, by server, tool and outcome (ok, tool_error, denied, error).',
      labelNames: ['server', 'tool', 'outcome'],
      registers,
    });
    this.#denials = new Counter({
      name: 'interlock_gateway_denials_total',
      help: 'Tool calls the capability gate refused, by server and tool.',
      labelNames: ['server', 'tool'],
      registers,
    });
    this.#latency = new Histogram({
      name: 'interlock_gateway_call_duration_seconds',
      help: 'Time from a call reaching the gateway to its answer, by server and outcome.',
      labelNames: ['server', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.#rejected = new Counter({
      name: 'interlock_gateway_rejected_requests_total',
      help: 'HTTP requests refused before any MCP message was read (400 ambiguous credential, 401 no or bad credential, 403 scope, Host, Origin or not an operator).',
      labelNames: ['status'],
      registers,
    });
    new Gauge({
      name: 'interlock_gateway_upstream_up',
      help: 'Whether each upstream server is connected (1) or not (0).',
      labelNames: ['server'],
      registers,
      collect() {
        for (const [server, health] of Object.entries(manager.health())) {
          this.set({ server }, health.state === 'ready' ? 1 : 0);
        }
      },
    });
    const flowStates = options.flowStates;
    if (flowStates !== undefined) {
      new Gauge({
        name: 'interlock_gateway_flow_states',
        help: "Callers' flow states the gateway holds (one per authenticated HTTP principal), of gateway.flow.maxStates.",
        registers,
        collect() {
          this.set(flowStates());
        },
      });
    }
    const routed = options.routed;
    if (routed !== undefined) {
      new Gauge({
        name: 'interlock_gateway_routed_rounds',
        help: "Rounds of calls routed between gateway replicas since start: 'forwarded' to the replica that holds the call, 'served' here for another replica.",
        labelNames: ['direction'],
        registers,
        collect() {
          const counts = routed();
          this.set({ direction: 'forwarded' }, counts.forwarded);
          this.set({ direction: 'served' }, counts.served);
        },
      });
    }
  }

  /** The `content-type` of {@link render}'s output. */
  get contentType(): string {
    return this.#registry.contentType;
  }

  /** Every metric in the Prometheus text format. */
  render(): Promise<string> {
    return this.#registry.metrics();
  }

  onCall(record: Parameters<GatewayCallObserver['onCall']>[0]): void {
    this.#calls.inc({ server: record.server, tool: record.tool, outcome: record.outcome });
    if (record.outcome === 'denied') this.#denials.inc({ server: record.server, tool: record.tool });
    this.#latency.observe({ server: record.server, outcome: record.outcome }, record.durationMs / 1000);
  }

  rejected(status: number): void {
    this.#rejected.inc({ status: String(status) });
  }
}
