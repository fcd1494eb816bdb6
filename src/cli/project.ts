/**
 * A command's view of the project file: the loaded config, the capability set built from its policy, the pin
 * store, the audit sink and one `MCPClientManager` wired with all of them. Commands connect what they need,
 * and `close()` ends every server process the command started, also after Ctrl-C.
 */

import { dirname, join } from 'node:path';
import { openBrowser } from '../auth/loopback.js';
import { createServerAuth } from '../auth/server-auth.js';
import { FileTokenStore, StateTokenStore, type TokenStore } from '../auth/token-store.js';
import { httpSettingsFromConfig } from '../config/http.js';
import type { InterlockConfig } from '../config/load.js';
import { loadInterlockConfig } from '../config/load.js';
import { createMasker } from '../config/secrets.js';
import { ConfigError } from '../errors.js';
import { causeMessages, serverText } from '../interop/describe-error.js';
import { type Logger, silentLogger } from '../interop/logger.js';
import { MCPClientManager } from '../interop/manager.js';
import type { ServerRequestOptions } from '../interop/server-requests.js';
import { CapabilitySet } from '../security/capability-set.js';
import { serverLabelsOf } from '../security/flow-labels.js';
import { PinStore } from '../security/pinning.js';
import type { Approver, AuditSink } from '../security/types.js';
import { FleetQuotaCounter } from '../state/quota-counter.js';
import { SharedPins } from '../state/shared-pins.js';
import { SharedPolicy } from '../state/shared-policy.js';
import type { StateStore } from '../state/types.js';
import { Advisor } from './advice.js';
import { projectAuditSink } from './audit-sinks.js';
import type { CliElicitation } from './elicit.js';
import { HintedError, UsageError } from './exit.js';
import { closeWithin, interruptible } from './interrupt.js';
import { type CliIO, type Printer, visible } from './io.js';
import { VerdictExplainer } from './verdict.js';

/** What a command was started with. */
export interface CommandContext {
  io: CliIO;
  printer: Printer;
  /** `--config`. */
  configFile: string | undefined;
  verbose: boolean;
}

/** How one server's connect went. */
export interface ServerOutcome {
  state: 'connecting' | 'ready' | 'failed' | 'disabled';
  durationMs?: number | undefined;
  tools?: number | undefined;
  error?: Error | undefined;
}

/** Told about connect progress, server by server. */
export interface ConnectObserver {
  update(server: string, outcome: ServerOutcome): void;
}

/** The OAuth token file, kept in the folder of the pin file (`.interlock/` by default). */
export const TOKENS_FILE_NAME = 'tokens.json';

/** Where the CLI keeps OAuth token state for a project: {@link TOKENS_FILE_NAME} beside its pin file. */
export function tokensFile(config: Pick<InterlockConfig, 'pinsFile'>): string {
  return join(dirname(config.pinsFile), TOKENS_FILE_NAME);
}

/** What a command adds to its project's manager. */
export interface ProjectOptions {
  /** Decides `ask` rules. @default none: ask is deny */
  approver?: Approver | undefined;
  /** Answers servers' questions. @default none: the elicitation capability is not declared */
  elicitation?: CliElicitation | undefined;
  /** Answers servers' requests some other way (the gateway relays them to its clients); wins over `elicitation`. */
  serverRequests?: ServerRequestOptions | undefined;
  /**
   * The command shows changed definitions itself (`interlock pins`): a blocked tool's warning then names only the
   * approval, not `interlock pins` again (issue 39). @default false
   */
  showsPins?: boolean | undefined;
}

/** The open project of one command. */
export class Project {
  readonly config: InterlockConfig;
  readonly capabilities: CapabilitySet;
  readonly manager: MCPClientManager;
  readonly pins: PinStore;
  /** Where OAuth state is kept: the project's Redis with a `state` section, else the token file. */
  readonly tokens: TokenStore;
  readonly outcomes = new Map<string, ServerOutcome>();
  readonly #audit: AuditSink | undefined;
  readonly #state: StateStore | undefined;
  readonly #quotaCounter: FleetQuotaCounter | undefined;
  /** The fleet's store (`state.redis`), when the file names one (the gateway console reads its audit stream). */
  get store(): StateStore | undefined {
    return this.#state;
  }

  /** The policy shared through the store (`state.policy`), when the file names one. */
  readonly sharedPolicy: SharedPolicy | undefined;
  readonly #sharedPins: SharedPins | undefined;
  readonly #pinsBefore: string;
  readonly #ctx: CommandContext;
  #closing: Promise<void> | undefined;
  #advisor: Advisor | undefined;

  private constructor(
    ctx: CommandContext,
    config: InterlockConfig,
    pins: PinStore,
    http: Awaited<ReturnType<typeof httpSettingsFromConfig>>,
    state:
      | {
          store: StateStore;
          pins: SharedPins;
          quotaCounter: FleetQuotaCounter;
          policy: SharedPolicy | undefined;
        }
      | undefined,
    audit: AuditSink | undefined,
    options: ProjectOptions,
  ) {
    this.#ctx = ctx;
    this.config = config;
    this.pins = pins;
    this.#sharedPins = state?.pins;
    this.#pinsBefore = JSON.stringify(pins.toJSON());
    const warn = (message: string) => ctx.printer.warn(message);
    this.#state = state?.store;
    this.#quotaCounter = state?.quotaCounter;
    // With a `state` section, maxCalls quotas count in Redis and hold across every process and host; while Redis
    // is away they fail closed or give a local share, as the section says. Pins and OAuth tokens live there too.
    const setOptions = {
      onWarning: warn,
      quotaCounter: state?.quotaCounter,
      // Issue 42: the servers' labels and sinks from the project file, added to the policy's.
      serverLabels: serverLabelsOf(config.servers),
    };
    this.tokens =
      state === undefined ? new FileTokenStore(tokensFile(config)) : new StateTokenStore(state.store);
    this.sharedPolicy = state?.policy;
    this.capabilities =
      state?.policy !== undefined
        ? state.policy.capabilities
        : config.cedarPolicy !== undefined
          ? CapabilitySet.fromCedar(config.cedarPolicy, setOptions)
          : config.policy === undefined
            ? new CapabilitySet(setOptions)
            : CapabilitySet.fromPolicy(config.policy, setOptions);
    this.#audit = audit;
    this.manager = new MCPClientManager({
      capabilities: this.capabilities,
      pins,
      audit: this.#audit,
      agent: config.agent,
      approver: options.approver,
      // Questions servers ask (elicitation), still decided by the policy first.
      onElicitation: options.elicitation?.onElicitation,
      onUrlElicitation: options.elicitation?.onUrlElicitation,
      ...options.serverRequests,
      logger: ctx.verbose ? stderrLogger(ctx.printer) : silentLogger,
      // The file's `network` (SSRF guard) and `http` (proxy, certificates); defaults when absent.
      ...http,
      // Servers with `auth` (OAuth) or `headersHelper`: tokens persist beside the pins, in a 0600 file; a sign-in
      // opens the browser and prints the URL, and the redirect comes back to a loopback port.
      serverAuth: createServerAuth({
        store: this.tokens,
        // `BROWSER` is honored, from the environment the CLI was given.
        openUrl: (url) => openBrowser(url, (line) => ctx.printer.lineErr(visible(line)), { env: ctx.io.env }),
      }),
    });
    this.manager.on('warning', (w) => {
      // Said below in CLI terms: the library's message names the method a program would call.
      if (w.code !== 'TOOL_DEFINITION_CHANGED') warn(w.message);
    });
    this.manager.on('tool_definition_changed', (e) => {
      if (e.action === 'blocked') {
        const approve = `interlock pins --approve ${e.name} --hash ${e.currentHash.slice(0, 12)}`;
        warn(
          options.showsPins === true
            ? `tool '${e.name}' changed its definition since it was pinned; its calls are blocked until you approve the change shown below: ${approve}`
            : `tool '${e.name}' changed its definition since it was pinned; its calls are blocked until you review the change with 'interlock pins' and approve it: ${approve}`,
        );
      } else if (e.action === 'warned') {
        warn(
          `tool '${e.name}' changed its definition since it was pinned; the new definition was pinned (onToolChange: warn)`,
        );
      }
    });
  }

  /** Verdicts of this project's policy, and what to change about them, in CLI terms. */
  get advisor(): Advisor {
    const shared = this.sharedPolicy;
    const name = this.config.state?.policy?.name;
    const filePolicy = this.config.policy;
    this.#advisor ??= new Advisor(
      this.config,
      this.#ctx.io.cwd,
      new VerdictExplainer(this.capabilities),
      shared === undefined || name === undefined
        ? undefined
        : {
            name,
            version: shared.version,
            file:
              filePolicy === undefined
                ? undefined
                : new VerdictExplainer(CapabilitySet.fromPolicy(filePolicy, { onWarning: () => {} })),
          },
    );
    return this.#advisor;
  }

  /** The audit sinks of the project file's `audit` section (file, stream, OpenTelemetry logs, the recording), if any. */
  get audit(): AuditSink | undefined {
    return this.#audit;
  }

  /** Loads the project file (`--config`, or the default in the working directory) and opens its stores. */
  static async open(ctx: CommandContext, options: ProjectOptions = {}): Promise<Project> {
    const config = await loadInterlockConfig({
      file: ctx.configFile,
      cwd: ctx.io.cwd,
      env: ctx.io.env,
    }).catch((err: unknown) => {
      // Issue 39: a newcomer without a project file is told the command that writes one.
      const none = err instanceof ConfigError && err.issues.some((i) => i.path === '(file)');
      throw none && ctx.configFile === undefined
        ? new HintedError(
            err,
            "'interlock init' writes one here (with the servers of your .mcp.json, if any)",
          )
        : err;
    });
    const mask = createMasker(config.secrets.flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]));
    ctx.printer.setMask(mask);
    if (config.policy === undefined && config.cedarPolicy === undefined && !ctx.printer.json) {
      ctx.printer.warn(`${config.file} has no policy: every tool call is denied.`);
    }
    const pins = await PinStore.load(config.pinsFile);
    const http = await httpSettingsFromConfig(config);
    // Loaded only when the file asks for it: other commands never load the Redis client.
    const store =
      config.state === undefined
        ? undefined
        : await (await import('../state/redis.js')).RedisStateStore.connect(config.state.redis);
    if (store === undefined) {
      const audit = await projectAuditSink(config, ctx.io.env, undefined);
      return new Project(ctx, config, pins, http, undefined, audit, options);
    }
    let shared: SharedPins | undefined;
    try {
      const audit = await projectAuditSink(config, ctx.io.env, store);
      // The pin file's pins join the fleet's where it has none; the fleet's are loaded before anything connects.
      shared = await SharedPins.open(store, { pins });
      const quotaCounter = new FleetQuotaCounter(store, {
        onUnavailable: config.state?.quotaFallback,
        lease: config.state?.quotaLease,
      });
      const name = config.state?.policy?.name;
      // A shared policy: the file's policy is its first version; later versions (a revoke anywhere) apply here.
      const policy =
        name === undefined
          ? undefined
          : await SharedPolicy.open(store, {
              name,
              initial: config.policy,
              capabilities: { onWarning: (m) => ctx.printer.warn(m), quotaCounter },
              onError: (err) => ctx.printer.warn(`shared policy '${name}': ${(err as Error).message}`),
            });
      return new Project(
        ctx,
        config,
        pins,
        http,
        { store, pins: shared, quotaCounter, policy },
        audit,
        options,
      );
    } catch (err) {
      await shared?.close();
      await store.close();
      throw err;
    }
  }

  /** The server a tool name belongs to, when it is an exposed name of a configured server. */
  serverOf(toolName: string): string | undefined {
    const match = /^mcp__(.+?)__./.exec(toolName);
    const server = match?.[1];
    return server !== undefined && this.config.servers.some((s) => s.name === server) ? server : undefined;
  }

  /**
   * Connects the named servers (all when `names` is undefined) in parallel, reporting progress to `observer`.
   * Ctrl-C closes everything and throws `InterruptedError`.
   */
  async connect(names?: readonly string[], observer?: ConnectObserver): Promise<void> {
    if (names !== undefined) {
      const unknown = names.filter((n) => !this.config.servers.some((s) => s.name === n));
      if (unknown.length > 0) {
        const known = this.config.servers.map((s) => s.name).join(', ');
        throw new UsageError(
          `No server named '${unknown.join("', '")}' in ${this.config.file}. Servers: ${known}.`,
        );
      }
    }
    const configs = this.config.servers.filter((s) => names === undefined || names.includes(s.name));
    const set = (server: string, outcome: ServerOutcome) => {
      this.outcomes.set(server, outcome);
      observer?.update(server, outcome);
    };
    for (const c of configs) set(c.name, c.enabled ? { state: 'connecting' } : { state: 'disabled' });
    const onConnected = (e: { server: string; durationMs: number; tools: number }) =>
      set(e.server, { state: 'ready', durationMs: e.durationMs, tools: e.tools });
    const onFailed = (e: { server: string; durationMs: number; error: Error }) =>
      set(e.server, { state: 'failed', durationMs: e.durationMs, error: e.error });
    this.manager.on('connected', onConnected).on('connection_failed', onFailed);
    try {
      await this.interruptible(this.manager.connectAll(configs));
    } finally {
      this.manager.off('connected', onConnected).off('connection_failed', onFailed);
    }
  }

  /** Servers that were to connect and did not. */
  get failed(): [string, Error | undefined][] {
    return [...this.outcomes].filter(([, o]) => o.state === 'failed').map(([n, o]) => [n, o.error]);
  }

  /** Warns on stderr about each server that failed to connect (with --verbose, the protocol detail too). */
  warnFailed(): void {
    for (const [name, error] of this.failed) {
      this.#ctx.printer.warn(
        `server '${name}' did not connect: ${error?.message.split('\n')[0] ?? 'unknown error'}`,
      );
      this.printDetail(error);
    }
  }

  /**
   * With --verbose: the causes behind an error, one `detail:` line each on stderr. A connect error leads with what
   * the user can act on (nothing listening at host:port); the protocol step that noticed it is said here (issue 39).
   */
  printDetail(error: Error | undefined): void {
    if (!this.#ctx.verbose || error === undefined) return;
    const { printer } = this.#ctx;
    for (const line of causeMessages(error)) {
      printer.lineErr(`  ${printer.style('dim', 'detail:', 'err')} ${visible(serverText(line))}`);
    }
  }

  /** Runs `work`; on Ctrl-C closes the project (servers included) and throws `InterruptedError`. */
  interruptible<T>(work: Promise<T>): Promise<T> {
    // Connected servers close at once; the manager's close waits for connects still in flight.
    return interruptible(this.#ctx.io.signal, work, () =>
      this.manager.disconnectAll().then(() => this.close()),
    );
  }

  /** Saves the pin file when this command pinned something new or approved a change. */
  async savePins(): Promise<boolean> {
    if (JSON.stringify(this.pins.toJSON()) === this.#pinsBefore) return false;
    await this.pins.save(this.config.pinsFile);
    return true;
  }

  /**
   * Closes every server and the audit file. Safe to call twice. After Ctrl-C it waits a bounded time: a server
   * still in its handshake then ends with this process (its stdin closes).
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.manager.close();
      await this.#audit?.close?.();
      // Pins approved or first seen by this command reach the fleet before the connection closes.
      await this.#sharedPins
        ?.flush()
        .catch((err: Error) => this.#ctx.printer.warn(`pins not shared: ${err.message}`));
      await this.sharedPolicy?.close();
      await this.#sharedPins?.close();
      // Leased quota units not spent go back to the fleet before the connection closes.
      await this.#quotaCounter?.close();
      await this.#state?.close();
    })();
    return closeWithin(this.#ctx.io.signal, this.#closing);
  }
}

/** `audit.file` and the decision recording of `audit.record` (issue 40), one sink for the gate. */
function stderrLogger(printer: Printer): Logger {
  const log =
    (level: string) =>
    (message: string): void =>
      printer.lineErr(printer.style('dim', `[${level}] ${visible(message)}`, 'err'));
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}
