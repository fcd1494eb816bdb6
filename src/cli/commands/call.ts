/**
 * `interlock call <tool> [--args JSON | --args-file F]`: one gated call through the manager, so the policy,
 * pins, approvals and audit apply exactly as they do for an agent. Prints the result string.
 */
import { createInterface } from 'node:readline';
import { PermissionDeniedError } from '../../errors.js';
import type { Approver } from '../../security/types.js';
import type { ToolAnnotations } from '../../tools/tool-wrapper.js';
import { HintedError } from '../exit.js';
import { type CliIO, type Printer, visible } from '../io.js';
import { type CommandContext, Project } from '../project.js';
import { VerdictExplainer } from '../verdict.js';
import { type ArgsOptions, connectFor, readArgs } from './shared.js';

export async function callCommand(ctx: CommandContext, name: string, options: ArgsOptions): Promise<number> {
  const args = await readArgs(ctx.io, options);
  const project = await Project.open(ctx, { approver: terminalApprover(ctx.io, ctx.printer) });
  const { printer } = ctx;
  try {
    const tool = await connectFor(project, name);
    await project.savePins();
    const signal = ctx.io.signal;
    const result = await project
      .interruptible(project.manager.callTool(name, args, signal === undefined ? {} : { signal }))
      .catch((err: unknown) => {
        if (!(err instanceof PermissionDeniedError)) throw err;
        throw denialAdvice(project, err, tool.annotations);
      });
    if (printer.json) {
      printer.data({
        tool: name,
        server: tool.server,
        isError: result.isError,
        text: result.text,
        ...(result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent }),
      });
    } else {
      // A server's text must not drive the terminal; piped, it goes out as it came.
      const text = printer.stdoutIsTTY ? visible(result.text) : result.text;
      printer.write(text.endsWith('\n') ? text : `${text}\n`);
    }
    return result.isError ? 1 : 0;
  } finally {
    await project.close();
  }
}

/**
 * A denial with its reason in CLI terms and what to change: the rule to add, the rule that denies, or (when a
 * conditional rule covers the tool) what it wants of the arguments.
 */
export function denialAdvice(
  project: Project,
  err: PermissionDeniedError,
  annotations: ToolAnnotations | undefined,
): HintedError {
  const context = { agent: project.config.agent, annotations };
  const effect = err.rule?.effect ?? 'default-deny';
  const conditionHint =
    err.rule === undefined
      ? new VerdictExplainer(project.capabilities).conditionHint(err.resource, err.action, context)
      : undefined;
  const advice = project.advisor.advise(
    { effect, reason: err.reason, rule: err.rule },
    err.resource,
    err.action,
    conditionHint,
  );
  return new HintedError(err, advice.fix, {
    reason: advice.reason,
    data: advice.rule === undefined ? undefined : { suggestedRule: advice.rule },
  });
}

/**
 * Asks on the terminal when an `ask` rule decides. Only when stdin and stderr are terminals: piped or with
 * `--json` there is nobody to ask, and `ask` stays a denial.
 */
function terminalApprover(io: CliIO, printer: Printer): Approver | undefined {
  const input = io.stdin;
  if (input?.isTTY !== true || !printer.stderrIsTTY || printer.json) return undefined;
  return async (request) => {
    // The reason names the rule that asks (id, pattern, description).
    printer.lineErr(
      `${printer.style('yellow', 'approval needed:', 'err')} ${visible(request.decision.reason)}`,
    );
    printer.writeErr(`Allow '${request.action}' on '${request.resource}' once? [y/N] `);
    const lines = createInterface({ input, terminal: false });
    try {
      const answer = await new Promise<string>((resolve) => {
        lines.once('line', resolve);
        lines.once('close', () => resolve(''));
        io.signal?.addEventListener('abort', () => resolve(''), { once: true });
      });
      return /^y(es)?$/i.test(answer.trim());
    } finally {
      lines.close();
    }
  };
}
