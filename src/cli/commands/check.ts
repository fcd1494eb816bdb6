/**
 * `interlock check <tool> [--args JSON] [--seen LABELS]`: what the gate would decide for a call, and why, without
 * calling anything. Side-effect free: `CapabilitySet.check` only, no quota used, no audit record written. Also says
 * whether the arguments fit the tool's schema and whether a changed definition blocks the tool.
 * A resource (`mcp:notes:write_note`) is checked against the policy alone, without connecting.
 */
import type { FlowState } from '../../security/flow.js';
import { type FlowLabels, LABEL_NAME_MESSAGE, LABEL_NAME_RE } from '../../security/flow-labels.js';
import { resourceFor, SCHEME_ACTIONS } from '../../security/pattern.js';
import { compileInputValidator } from '../../tools/validate.js';
import { indent } from '../advice.js';
import { ExitCode, UsageError } from '../exit.js';
import { oneLine } from '../format.js';
import { visible } from '../io.js';
import { type CommandContext, Project } from '../project.js';
import { describeRule } from '../report.js';
import { type ToolVerdict, VerdictExplainer } from '../verdict.js';
import { type ArgsOptions, connectFor, readArgs } from './shared.js';

export interface CheckOptions extends ArgsOptions {
  /** The action, for a resource; tools are always `execute`. */
  action?: string | undefined;
  /** `--seen`: labels the session has seen (issue 42), comma-separated. @default none */
  seen?: string | undefined;
}

/**
 * The session a check is made in (issue 42): a fresh flow state with the policy's settings that has seen the labels
 * of `--seen`. A bad label is a usage error naming it.
 */
function sessionFor(labels: FlowLabels, seen: string | undefined): FlowState {
  const flow = labels.createFlowState();
  const names = (seen ?? '')
    .split(',')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const bad = names.find((l) => !LABEL_NAME_RE.test(l));
  if (bad !== undefined) {
    throw new UsageError(`--seen: '${visible(bad)}' is not a label: ${LABEL_NAME_MESSAGE}.`);
  }
  flow.record('(interlock check --seen)', names);
  return flow;
}

export async function checkCommand(
  ctx: CommandContext,
  name: string,
  options: CheckOptions,
): Promise<number> {
  const args =
    options.args === undefined && options.argsFile === undefined
      ? undefined
      : await readArgs(ctx.io, options);
  const project = await Project.open(ctx);
  const { printer } = ctx;
  try {
    const explainer = new VerdictExplainer(project.capabilities);
    const agent = project.config.agent;
    const labels = project.capabilities.flowLabels;
    const flow = sessionFor(labels, options.seen);
    const isResource = /^[a-z][a-z-]*:/.test(name) && !name.startsWith('mcp__');
    let report: Record<string, unknown>;
    let verdict: ToolVerdict;
    let blocked = false;
    let inputIssues: { field: string; message: string }[] = [];
    let deniedWhatever = false;
    if (isResource) {
      const scheme = name.slice(0, name.indexOf(':'));
      const action = options.action ?? SCHEME_ACTIONS[scheme]?.[0] ?? 'execute';
      const context = { agent, flow, labels: labels.labelsFor(name).all };
      verdict =
        args === undefined
          ? explainer.explain(name, action, context)
          : explainer.decide(name, action, { ...context, args });
      report = { resource: name, action };
    } else {
      const tool = await connectFor(project, name);
      await project.savePins();
      const resource = resourceFor.tool(tool.server, tool.tool);
      const context = {
        agent,
        annotations: tool.annotations,
        flow,
        labels: labels.labelsFor(resource, tool.annotations).all,
      };
      verdict =
        args === undefined
          ? explainer.explain(resource, 'execute', context)
          : explainer.decide(resource, 'execute', { ...context, args });
      blocked = project.manager.blockedTools.some((b) => b.name === name);
      if (args !== undefined) {
        inputIssues = compileInputValidator({ ...tool.inputSchema }, { toolName: name })(args);
        // As `call` does (issue 18 item 3): bad arguments are a usage error unless the policy denies the tool
        // whatever its arguments (an explicit deny, or no rule that could allow it).
        deniedWhatever =
          verdict.effect === 'deny' || explainer.explain(resource, 'execute', context).verdict === 'denied';
      }
      report = {
        tool: name,
        server: tool.server,
        resource,
        action: 'execute',
        description: tool.description,
      };
    }
    const allowed = verdict.verdict === 'allowed' && !blocked;
    const resource = String(report.resource);
    const conditionHint =
      args !== undefined && verdict.effect === 'default-deny'
        ? explainer.conditionHint(resource, String(report.action), { agent })
        : undefined;
    const advice =
      verdict.verdict === 'allowed'
        ? undefined
        : project.advisor.advise(verdict, resource, String(report.action), conditionHint);
    const reason = advice?.reason ?? verdict.reason;
    const hint = advice?.fix;
    const exitCode = blocked
      ? ExitCode.DENIED
      : inputIssues.length > 0 && !deniedWhatever
        ? ExitCode.USAGE
        : verdict.verdict !== 'allowed'
          ? ExitCode.DENIED
          : ExitCode.OK;
    if (printer.json) {
      printer.data({
        ...report,
        allowed,
        verdict: verdict.verdict,
        effect: verdict.effect,
        rule: verdict.rule ?? null,
        reason,
        hint: hint ?? null,
        ...(advice?.rule === undefined ? {} : { suggestedRule: advice.rule }),
        ...(verdict.flow !== undefined ? { flow: verdict.flow } : {}),
        argumentsChecked: args !== undefined,
        inputIssues,
        blocked,
      });
      return exitCode;
    }
    const label = (key: string) => printer.style('dim', key.padEnd(10));
    const style = { allowed: 'green', denied: 'red', ask: 'yellow', conditional: 'cyan' } as const;
    printer.line(printer.style('bold', name));
    if (typeof report.description === 'string' && report.description !== '') {
      printer.line(`${label('about')}${oneLine(report.description)}`);
    }
    printer.line(`${label('resource')}${String(report.resource)}  (${String(report.action)})`);
    printer.line(
      `${label('verdict')}${printer.style(style[verdict.verdict], verdict.verdict.toUpperCase())}  (${verdict.effect})`,
    );
    printer.line(`${label('rule')}${verdict.rule === undefined ? '-' : describeRule(verdict.rule)}`);
    printer.line(`${label('reason')}${visible(reason)}`);
    if (verdict.flow !== undefined) {
      const f = verdict.flow;
      const carried = f.carried.map((c) => `argument '${c.argument}' carries ${c.label} from ${c.source}`);
      const seenText = f.labels.length === 0 ? 'no named label seen' : `seen ${f.labels.join(', ')}`;
      const targetText = f.target === undefined ? [] : [`target ${f.target.join(', ')}`];
      printer.line(`${label('flow')}${visible([seenText, ...targetText, ...carried].join('; '))}`);
    }
    if (hint !== undefined) printer.line(`${label('hint')}${indent(visible(hint), 10).trimStart()}`);
    if (args === undefined) {
      printer.line(
        `${label('arguments')}not given: conditions on arguments were not evaluated (pass --args)`,
      );
    } else if (!isResource) {
      printer.line(
        `${label('arguments')}${inputIssues.length === 0 ? 'match the input schema' : inputIssues.map((i) => `${i.field || '(arguments)'}: ${i.message}`).join('; ')}`,
      );
    }
    if (blocked) {
      printer.line(
        `${label('pin')}${printer.style('red', 'definition changed since pinned: calls are blocked')} (review it with interlock pins)`,
      );
    }
    return exitCode;
  } finally {
    await project.close();
  }
}
