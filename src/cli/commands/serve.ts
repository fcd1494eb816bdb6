/**
 * `interlock serve`: the project's servers as one MCP server (issue 17). On stdio (the default) for a desktop
 * client that starts it as a child process; with `--http`, Streamable HTTP for many clients. Every call is
 * checked against the caller's rules (the project file's `gateway` section) and audited. Ctrl-C or SIGTERM
 * drains calls in flight, then closes every upstream server.
 */
import { once } from 'node:events';
import { Gateway } from '../../gateway/gateway.js';
import { ServerRequestRelay } from '../../gateway/relay.js';
import { consolePublisher } from '../console-publisher.js';
import { UsageError } from '../exit.js';
import { type CommandContext, Project } from '../project.js';
import { packageVersion } from '../version.js';

/** Options of `interlock serve`. */
export interface ServeOptions {
  http?: boolean;
  host?: string;
  port?: string;
}

export async function serveCommand(ctx: CommandContext, options: ServeOptions): Promise<number> {
  const port = options.port === undefined ? undefined : Number(options.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65_535)) {
    throw new UsageError(`--port must be a port number from 0 to 65535, not '${options.port}'.`);
  }
  if (!options.http && (options.host !== undefined || options.port !== undefined)) {
    throw new UsageError('--host and --port go with --http; without it the gateway serves stdio.');
  }
  // Elicitation and sampling requests of upstream servers go to the client that made the call, gated.
  const relay = new ServerRequestRelay();
  const project = await Project.open(ctx, { serverRequests: relay.handlers });
  const { printer } = ctx;
  let gateway: Gateway | undefined;
  try {
    // On stdio, stdout carries the protocol: progress and warnings go to stderr only (the printer's warn does).
    await project.connect();
    project.warnFailed();
    await project.savePins();
    gateway = new Gateway({
      manager: project.manager,
      config: project.config.gateway,
      audit: project.audit,
      serverInfo: { name: 'interlock', version: packageVersion() },
      relay,
      sharedPolicy: project.sharedPolicy,
      // The console publishes the project file's policy as on disk, through the checks of `interlock policy publish`.
      policyPublisher:
        project.sharedPolicy &&
        consolePublisher(
          { file: project.config.file, cwd: ctx.io.cwd, env: ctx.io.env },
          project.sharedPolicy,
        ),
      store: project.store,
      // The gateway's warnings to the operator (a tool listed under another name) go to stderr.
      logger: {
        debug: () => {},
        info: () => {},
        warn: (m) => printer.warn(m),
        error: (m) => printer.warn(m),
      },
    });
    if (options.http) {
      const { url, console: consoleUrl } = await gateway.listen({
        ...(options.host === undefined ? {} : { host: options.host }),
        ...(port === undefined ? {} : { port }),
      });
      // One plain line for people and scripts; the endpoint is all a client needs.
      printer.line(`interlock gateway listening on ${url.href}`);
      if (consoleUrl !== undefined) printer.line(`operator console on ${consoleUrl.href}`);
      await aborted(ctx.io.signal);
    } else {
      const stdin = ctx.io.stdin;
      if (stdin === undefined) throw new UsageError('interlock serve needs a standard input on stdio.');
      gateway.serveStdio();
      await Promise.race([once(stdin as NodeJS.ReadableStream, 'end'), aborted(ctx.io.signal)]);
    }
    return 0;
  } finally {
    await gateway?.close();
    await project.close();
  }
}

function aborted(signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return new Promise(() => {});
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
