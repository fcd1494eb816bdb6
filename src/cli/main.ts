#!/usr/bin/env node
/**
 * `interlock`: the command line (issue 6). `main(argv, io)` runs one command and resolves with its exit code,
 * so tests and other programs can run it in-process; run as a program, it wires the real process in, turns
 * Ctrl-C into a clean shutdown (exit 130) and exits with the command's code.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { ExitCode } from './exit.js';
import { type CliIO, Printer, processIO } from './io.js';
import type { CommandContext } from './project.js';
import { helpHint, reportError } from './report.js';
import { packageVersion } from './version.js';

const EXAMPLES = `
Examples:
  $ interlock demo                        see the gate at work on two bundled servers (no setup)
  $ interlock servers                     connect every server of ./interlock.config.yaml
  $ interlock tools --server notes        list the tools of one server with the policy's verdict
  $ interlock tools notes/write_note      one tool in full: its arguments, verdict and description
  $ interlock check mcp__notes__write_note --args '{"id":"team/x","text":"hi"}'
  $ interlock call mcp__notes__read_note --args '{"id":"drafts/welcome"}'
  $ interlock call mcp__notes__write_note --args-file args.json --json
  $ interlock pins --approve mcp__notes__read_note --hash 3f2a9c0d1e4b
  $ interlock login                       sign in to every OAuth server (browser, or client credentials)
  $ interlock login --status              show stored sign-ins: scope and expiry, nothing contacted
  $ interlock logout crm                  revoke and forget the tokens of one server
  $ interlock policy revoke search-budget  remove a rule of the shared policy in every process (state.policy)
  $ interlock audit verify                check the chained audit trail; exit 1 if a record was touched
  $ interlock serve                       the project as one MCP server on stdio, for a desktop client
  $ interlock serve --http --port 8080    the same over Streamable HTTP, callers checked by gateway.auth

Project file:
  interlock.config.yaml (or .yml, .json) in the working directory, or --config <file>.
  It holds mcpServers (Claude Desktop / .mcp.json shape; VS Code's "servers" too), per-server options,
  a policy, and where pins and audit records go. \${VAR} and \${VAR:-default} are expanded.

Exit codes:
  0    ok
  1    error: a server failed to connect, a tool reported an error, a request failed
  2    bad usage or config: unknown option, bad --args, invalid project file, unknown tool
  3    denied: the policy denied the call (or it needs an approval), or its definition changed
  4    a policy check found something: a policy test failed, or policy check --strict found a dead rule
  130  interrupted (Ctrl-C)

Colors only on a terminal, never with NO_COLOR set. --json prints one JSON document on stdout.
`;

interface GlobalOptions {
  config?: string;
  json?: boolean;
  color?: boolean;
  verbose?: boolean;
}

/** Runs the `interlock` command line with `argv` (without the node and script paths). Resolves with the exit code. */
export async function main(argv: readonly string[], io: CliIO = processIO()): Promise<number> {
  let exitCode: number = ExitCode.OK;
  let printer: Printer | undefined;
  const run =
    <A extends unknown[]>(command: (ctx: CommandContext, ...args: A) => Promise<number>) =>
    async (...raw: unknown[]): Promise<void> => {
      const cmd = raw[raw.length - 1] as Command;
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      printer = new Printer(io, { json: globals.json === true, noColor: globals.color === false });
      const ctx: CommandContext = {
        io,
        printer,
        configFile: globals.config,
        verbose: globals.verbose === true,
      };
      try {
        exitCode = await command(ctx, ...(raw.slice(0, -1) as A));
      } catch (err) {
        exitCode = reportError(printer, err, cmd.name());
      }
    };

  // Commands load on use: --help, --version and usage errors do not load the MCP SDK.
  const program = new Command('interlock')
    .description('Use the tools of many MCP servers at once, safely: every call checked against a policy.')
    .version(packageVersion(), '-V, --version')
    .option('-c, --config <file>', 'project file (default: interlock.config.yaml, .yml or .json here)')
    .option('--json', 'print one JSON document for machines')
    .option('--no-color', 'no colors (also when NO_COLOR is set or output is not a terminal)')
    .option('-v, --verbose', 'log what servers and connections do to stderr')
    .showHelpAfterError(`  hint: ${helpHint()}`)
    // Every command's --help lists --config, --json and the rest (issue 39); subcommands inherit this setting.
    .configureHelp({ showGlobalOptions: true })
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .addHelpText('after', EXAMPLES);

  program
    .command('init')
    .description(
      'write a commented interlock.config.yaml: the servers of ./.mcp.json if there is one, a policy that allows nothing',
    )
    .option(
      '--from <file>',
      'the mcp.json to take the servers from (default: .mcp.json, mcp.json, .vscode/ or .cursor/)',
    )
    .option(
      '--template <name>',
      'start the policy from an information-flow template: assistant, coding-agent or payments',
    )
    .option('--force', 'replace an existing project file')
    .action(
      run(async (ctx, options: { from?: string; force?: boolean; template?: string }) =>
        (await import('./commands/init.js')).initCommand(ctx, options),
      ),
    );

  program
    .command('servers')
    .description('connect every server in parallel, with live progress, then show a table of how it went')
    .action(run(async (ctx) => (await import('./commands/servers.js')).serversCommand(ctx)));

  program
    .command('tools')
    .description(
      "list every exposed tool: server, one-line description, and the policy's verdict with its rule; with a name, one tool in full",
    )
    .argument(
      '[tool]',
      'show one tool in full: its arguments (input schema), verdict and description. Names: mcp__notes__read_note, notes/read_note, or read_note when one server has it',
    )
    .option('-s, --server <name>', 'only this server')
    .action(
      run(async (ctx, tool: string | undefined, options: { server?: string }) =>
        (await import('./commands/tools.js')).toolsCommand(ctx, tool, options),
      ),
    );

  program
    .command('describe')
    .description('show one tool in full (the same as interlock tools <tool>)')
    .argument('<tool>', 'mcp__notes__read_note, notes/read_note, or read_note when one server has it')
    .action(
      run(async (ctx, tool: string) => (await import('./commands/tools.js')).toolsCommand(ctx, tool, {})),
    );

  program
    .command('call')
    .description('call one tool through the gate and print its result as a string (denied: exit 3)')
    .argument('<tool>', 'exposed tool name, e.g. mcp__notes__read_note')
    .addOption(new Option('--args <json>', 'arguments as a JSON object').conflicts('argsFile'))
    .option('--args-file <file>', 'read the arguments from a JSON file (- for stdin)')
    .action(
      run(async (ctx, tool: string, options: { args?: string; argsFile?: string }) =>
        (await import('./commands/call.js')).callCommand(ctx, tool, options),
      ),
    );

  program
    .command('resources')
    .description(
      "list the servers' resources with the policy's verdict; 'read URI' reads one through the gate (denied: exit 3)",
    )
    .argument('[action]', "'read', or nothing (or 'list') to list them")
    .argument('[uri]', "with 'read': the resource's URI, e.g. file:///docs/readme.md")
    .option('-s, --server <name>', 'only this server; with read: the server to read from')
    .action(
      run(async (ctx, action: string | undefined, uri: string | undefined, options: { server?: string }) =>
        (await import('./commands/extras-main.js')).resourcesMain(ctx, action, uri, options),
      ),
    );

  program
    .command('prompts')
    .description(
      "list the servers' prompts with the policy's verdict; 'get NAME' gets one through the gate (denied: exit 3)",
    )
    .argument('[action]', "'get', or nothing (or 'list') to list them")
    .argument('[name]', "with 'get': mcp__{server}__{prompt}, server/prompt, or the prompt's name")
    .option('-s, --server <name>', 'only this server; with get: the server the prompt is on')
    .addOption(
      new Option('--args <json>', "with get: the prompt's arguments, a JSON object of strings").conflicts(
        'argsFile',
      ),
    )
    .option('--args-file <file>', 'with get: read the arguments from a JSON file (- for stdin)')
    .action(
      run(
        async (
          ctx,
          action: string | undefined,
          name: string | undefined,
          options: { server?: string; args?: string; argsFile?: string },
        ) => (await import('./commands/extras-main.js')).promptsMain(ctx, action, name, options),
      ),
    );

  program
    .command('check')
    .description('explain what the policy decides for a call, and why, without calling anything')
    .argument('<tool>', 'exposed tool name, or a resource such as mcp:notes:write_note')
    .addOption(new Option('--args <json>', 'arguments to evaluate conditions with').conflicts('argsFile'))
    .option('--args-file <file>', 'read the arguments from a JSON file (- for stdin)')
    .option('--action <action>', 'action, for a resource (default: execute, read or get by scheme)')
    .option('--seen <labels>', 'labels the session has seen, for information-flow rules (comma-separated)')
    .action(
      run(
        async (
          ctx,
          tool: string,
          options: { args?: string; argsFile?: string; action?: string; seen?: string },
        ) => (await import('./commands/check.js')).checkCommand(ctx, tool, options),
      ),
    );

  program
    .command('pins')
    .description('show pinned tool definitions and which changed; approve a reviewed change')
    .option('--approve <tool>', 'pin the reviewed definition of a changed tool and save the pin file')
    .option(
      '--hash <hash>',
      'with --approve: the hash of the definition you reviewed (shown by interlock pins)',
    )
    .action(
      run(async (ctx, options: { approve?: string; hash?: string }) =>
        (await import('./commands/pins.js')).pinsCommand(ctx, options),
      ),
    );

  program
    .command('login')
    .description(
      'sign in to OAuth servers (default: every enabled one with auth) and keep the tokens; --status shows them',
    )
    .argument('[server...]', 'servers to sign in to (default: every enabled server with auth)')
    .option('--force', 'revoke and forget the stored tokens first, and sign in anew')
    .addOption(
      new Option('--status', 'show stored sign-ins (scope, expiry) without contacting anything').conflicts(
        'force',
      ),
    )
    .action(
      run(async (ctx, servers: string[], options: { force?: boolean; status?: boolean }) =>
        (await import('./commands/login.js')).loginCommand(ctx, servers, options),
      ),
    );

  program
    .command('logout')
    .description('revoke the stored OAuth tokens where the server allows it, and forget them')
    .argument('[server...]', 'servers to sign out of (default: every server with auth)')
    .action(
      run(async (ctx, servers: string[]) =>
        (await import('./commands/logout.js')).logoutCommand(ctx, servers),
      ),
    );

  // `interlock policy`: the policy's lifecycle. Each subcommand lives in its own file under commands/.
  const policy = program
    .command('policy')
    .description(
      "the policy's lifecycle; without a subcommand, the version of the policy shared through Redis",
    )
    .action(
      run(async (ctx) => (await import('./commands/policy.js')).policyCommand(ctx, 'status', undefined)),
    );
  policy
    .command('status')
    .description('the version of the policy shared through Redis (state.policy)')
    .action(
      run(async (ctx) => (await import('./commands/policy.js')).policyCommand(ctx, 'status', undefined)),
    );
  policy
    .command('publish')
    .description("make the project file's policy the next version for every process of the fleet")
    .option(
      '--reviewed <hash>',
      "the review hash 'interlock policy diff' printed for this policy (needed with state.policy.requireReview)",
    )
    .option(
      '--against <recording>',
      'with --reviewed: the recording the diff ran against (default audit.record.file)',
    )
    .action(
      run(async (ctx, options: { reviewed?: string; against?: string }) =>
        (await import('./commands/policy.js')).policyCommand(ctx, 'publish', undefined, options),
      ),
    );
  policy
    .command('diff')
    .description(
      'decide every recorded decision again under a new policy: what flips, by rule and by tool, and its review hash',
    )
    .argument(
      '[new-policy]',
      "a policy file, or a project file (its policy); default: this project file's policy",
    )
    .option('--against <recording>', 'the decision recording (default: audit.record.file)')
    .action(
      run(async (ctx, newPolicy: string | undefined, options: { against?: string }) =>
        (await import('./commands/policy-diff.js')).policyDiffCommand(ctx, newPolicy, options),
      ),
    );
  policy
    .command('revoke')
    .description('remove one rule of the shared policy in every process')
    .argument('<rule>', 'the id of the rule to remove')
    .action(
      run(async (ctx, rule: string) =>
        (await import('./commands/policy.js')).policyCommand(ctx, 'revoke', rule),
      ),
    );
  policy
    .command('export')
    .description(
      "print the project's policy in Cedar (issue 40), validated against Interlock's Cedar schema; the schema's path goes to stderr",
    )
    .option('--cedar', 'export as Cedar')
    .option('--out <file>', 'write the policy to this file instead of stdout')
    .action(
      run(async (ctx, options: { cedar?: boolean; out?: string }) =>
        (await import('./commands/policy-export.js')).policyExportCommand(ctx, options),
      ),
    );

  policy
    .command('test')
    .description(
      'run the policy tests (interlock.policy-tests.yaml beside the project file) against the policy; exit 4 when one fails',
    )
    .option(
      '-f, --file <file>',
      'the tests file (default: interlock.policy-tests.yaml beside the project file)',
    )
    .action(
      run(async (ctx, options: { file?: string }) =>
        (await import('./commands/policy-test.js')).policyTestCommand(ctx, options),
      ),
    );
  policy
    .command('check')
    .description(
      'for each principal, the tools, resources and server requests no request could ever allow, and rules that can never match',
    )
    .option('--offline', 'connect nothing: take tools from the pin file')
    .option('--at <time>', 'decide at this ISO 8601 time, for rules with expiresAt (default: now)')
    .option('--strict', 'exit 4 when a rule can never match')
    .action(
      run(async (ctx, options: { offline?: boolean; at?: string; strict?: boolean }) =>
        (await import('./commands/policy-check.js')).policyCheckCommand(ctx, options),
      ),
    );

  // `interlock audit`: the audit trail. Each subcommand lives in commands/audit.ts.
  const audit = program.command('audit').description('the audit trail of capability decisions');
  audit
    .command('verify')
    .description(
      "check chained audit trails (the project's audit.file and audit.stream by default): name every deleted, edited, reordered or inserted record and a cut tail; exit 1 on any finding",
    )
    .argument('[file]', 'a JSON-lines audit file (default: audit.file of the project file)')
    .option(
      '--redis <url>',
      "read the fleet's Redis stream at this URL (default: state.redis with audit.stream)",
    )
    .option('--stream <name>', 'with --redis: the stream name (default: audit.stream.name or audit)')
    .option('--key-prefix <prefix>', 'with --redis: the key prefix (default: state.redis.keyPrefix)')
    .addOption(
      new Option('--key-env <var>', 'the HMAC secret is in this environment variable').conflicts([
        'keyFile',
        'publicKey',
      ]),
    )
    .addOption(new Option('--key-file <file>', 'the HMAC secret is in this file').conflicts('publicKey'))
    .option('--public-key <file>', 'verify Ed25519 checkpoints with this PEM public key')
    .option('--open', 'the trail is still being written: a chain without its final checkpoint is no finding')
    .action(
      run(async (ctx, file: string | undefined, options: Record<string, string | boolean | undefined>) =>
        (await import('./commands/audit.js')).auditCommand(ctx, file, options),
      ),
    );

  program
    .command('serve')
    .description(
      "serve the project's servers as one MCP server, every call gated per caller: stdio, or --http",
    )
    .option('--http', 'serve Streamable HTTP instead of stdio (both protocol eras, many clients)')
    .option(
      '--host <host>',
      'with --http: the address to listen on (default: gateway.http.host or 127.0.0.1)',
    )
    .option('--port <port>', 'with --http: the port (default: gateway.http.port or 8080; 0 for any free one)')
    .action(
      run(async (ctx, options: { http?: boolean; host?: string; port?: string }) =>
        (await import('./commands/serve.js')).serveCommand(ctx, options),
      ),
    );

  program
    .command('demo')
    .description(
      'run the bundled example servers with a sample policy: allowed, denied, constrained, audited',
    )
    .action(run(async (ctx) => (await import('./commands/demo.js')).demoCommand(ctx)));

  // Usage errors end with the same hint as every other error, naming the command's own help.
  for (const command of program.commands) command.showHelpAfterError(`  hint: ${helpHint(command.name())}`);

  try {
    if (argv.length === 0) {
      program.outputHelp();
      return ExitCode.USAGE;
    }
    await program.parseAsync([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      const done = err.code === 'commander.helpDisplayed' || err.code === 'commander.version';
      return done ? ExitCode.OK : ExitCode.USAGE;
    }
    return reportError(printer ?? new Printer(io, { json: argv.includes('--json') }), err);
  }
  return exitCode;
}

/** True when this module is the program being run (also through the `bin` symlink). */
function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  const controller = new AbortController();
  const onSignal = () => {
    // A second Ctrl-C does not wait for anything.
    if (controller.signal.aborted) process.exit(ExitCode.INTERRUPTED);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // `interlock tools | head`: the reader went away; stop quietly, as Unix tools do.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw err;
    });
  }
  const code = await main(process.argv.slice(2), processIO(controller.signal));
  process.exitCode = code;
  if (controller.signal.aborted) process.exit(code);
  // Everything was closed; should a stray handle keep the loop alive, do not hang on it.
  setTimeout(() => process.exit(code), 1_000).unref();
}
