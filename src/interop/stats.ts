/**
 * Call statistics: counts plus latency percentiles over recent calls. Per server for `manager.health()`, and per
 * native tool for `agent.nativeToolHealth()` (src/session), which report them in the same {@link CallHealth} shape.
 */

/** How many recent call durations the latency percentiles are computed over. */
export const LATENCY_SAMPLES = 512;

/** What `health()` reports of calls, for a server's MCP calls and for a native tool's calls alike. */
export interface CallHealth {
  /** Calls sent and not yet settled. */
  callsInFlight: number;
  /** Calls finished. */
  calls: number;
  /** Calls that failed or returned an error result. */
  errors: number;
  /** Calls the gate refused (a rule, default deny, an unapproved ask, a failing audit sink): never run, not in `calls`. */
  denied: number;
  /** Latency percentiles over the last 512 calls, in ms; undefined before any call. */
  latencyMs: { p50: number | undefined; p95: number | undefined };
}

/** Counts calls and keeps a ring of recent durations. Recording is O(1); percentiles sort on demand. */
export class CallStats {
  #calls = 0;
  #errors = 0;
  #denied = 0;
  #inFlight = 0;
  readonly #samples = new Float64Array(LATENCY_SAMPLES);
  #next = 0;
  #filled = 0;

  /** Calls finished. */
  get calls(): number {
    return this.#calls;
  }

  /** Calls that failed or returned an error result. */
  get errors(): number {
    return this.#errors;
  }

  /** Calls the gate refused. */
  get denied(): number {
    return this.#denied;
  }

  /** Calls sent and not yet settled. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** A call was sent; pair with {@link settled}. */
  started(): void {
    this.#inFlight += 1;
  }

  /** A call {@link started} before has settled, whatever its outcome. */
  settled(): void {
    this.#inFlight -= 1;
  }

  /** Records one call the gate refused (it never ran, so it has no duration among the samples). */
  refused(): void {
    this.#denied += 1;
  }

  /** Records one finished call. `ok` is false for failures and error results. */
  record(durationMs: number, ok: boolean): void {
    this.#calls += 1;
    if (!ok) this.#errors += 1;
    this.#samples[this.#next] = durationMs;
    this.#next = (this.#next + 1) % LATENCY_SAMPLES;
    if (this.#filled < LATENCY_SAMPLES) this.#filled += 1;
  }

  /** The `q` quantile (0..1) of recent durations in ms, or undefined before any call. */
  percentile(q: number): number | undefined {
    if (this.#filled === 0) return undefined;
    const sorted = this.#samples.slice(0, this.#filled).sort();
    const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
    return sorted[index];
  }

  /** The figures as `health()` reports them. */
  health(): CallHealth {
    return {
      callsInFlight: this.#inFlight,
      calls: this.#calls,
      errors: this.#errors,
      denied: this.#denied,
      latencyMs: { p50: this.percentile(0.5), p95: this.percentile(0.95) },
    };
  }
}
