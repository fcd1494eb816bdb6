/** How a command's error is shown: a line (or a few) on stderr, or `{ "error": {...} }` with `--json`. */
import {
  ConfigError,
  isInterlockError,
  PermissionDeniedError,
  ToolDefinitionChangedError,
  ToolInputError,
  ToolNotFoundError,
} from '../errors.js';
import { ExitCode, exitCodeFor, HintedError, InterruptedError } from './exit.js';
import { type Printer, visible } from './io.js';

/** The error as data for `--json`. Never holds argument values, env or header values. */
export function errorData(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { code: 'ERROR', message: String(error) };
  const code = (error as { code?: unknown }).code;
  const out: Record<string, unknown> = {
    code: typeof code === 'string' ? code : 'ERROR',
    message: error.message,
  };
  if (isInterlockError(error) && error.server !== undefined) out.server = error.server;
  if (error instanceof ConfigError) {
    if (error.file !== undefined) out.file = error.file;
    out.issues = error.issues;
  } else if (error instanceof PermissionDeniedError) {
    Object.assign(out, {
      resource: error.resource,
      action: error.action,
      reason: error.reason,
      rule: error.rule ?? null,
    });
  } else if (error instanceof ToolNotFoundError) {
    out.suggestions = error.suggestions;
  } else if (error instanceof ToolInputError) {
    out.issues = error.issues;
  } else if (error instanceof ToolDefinitionChangedError) {
    Object.assign(out, {
      tool: error.toolName,
      pinnedHash: error.pinnedHash,
      currentHash: error.currentHash,
    });
  }
  return out;
}

/** Shows `error` and returns the exit code for it. */
export function reportError(printer: Printer, error: unknown, command?: string): number {
  const exitCode = exitCodeFor(error);
  const advice = error instanceof HintedError ? error : undefined;
  if (advice !== undefined) error = advice.error;
  const reason = error instanceof PermissionDeniedError ? (advice?.reason ?? error.reason) : undefined;
  if (printer.json) {
    const data = errorData(error);
    if (reason !== undefined && error instanceof PermissionDeniedError && reason !== error.reason) {
      data.reason = reason;
      data.message = `Permission denied: '${error.action}' on '${error.resource}'. ${reason}`;
    }
    if (error instanceof ToolDefinitionChangedError) data.message = blockedMessage(error);
    // A pointer to --help is for people; a script gets the advice that says what to change.
    const hint = advice?.hint ?? defaultHint(error, exitCode, undefined, false);
    printer.data({
      error: { ...data, ...advice?.data, ...(hint === undefined ? {} : { hint }), exitCode },
    });
    return exitCode;
  }
  showError(printer, error, reason);
  const hint = advice?.hint ?? defaultHint(error, exitCode, command);
  if (hint !== undefined) printHint(printer, hint);
  return exitCode;
}

/** `  hint: first line`, further lines indented under it. The one style of advice on stderr. */
export function printHint(printer: Printer, hint: string): void {
  const [first, ...rest] = visible(hint).split('\n');
  printer.lineErr(`  ${printer.style('dim', 'hint:', 'err')} ${first ?? ''}`);
  for (const line of rest) printer.lineErr(`        ${line}`);
}

/** The advice every error of a kind gets, when its command gave none. */
function defaultHint(
  error: unknown,
  exitCode: number,
  command: string | undefined,
  help = true,
): string | undefined {
  if (error instanceof ToolDefinitionChangedError) {
    return `review the change with 'interlock pins', then approve what you reviewed: interlock pins --approve ${error.toolName} --hash ${error.currentHash.slice(0, 12)}`;
  }
  if (error instanceof ToolNotFoundError) {
    return error.toolName.startsWith('mcp__')
      ? "'interlock tools' lists every tool"
      : "tools are named mcp__{server}__{tool}; 'interlock tools' lists them";
  }
  if (error instanceof ToolInputError) return `'interlock tools ${error.toolName}' shows its arguments`;
  if (help && exitCode === ExitCode.USAGE && !(error instanceof ConfigError)) return helpHint(command);
  return undefined;
}

/** `see 'interlock call --help'`: the hint after a usage error. */
export function helpHint(command?: string): string {
  return `see 'interlock ${command === undefined ? '' : `${command} `}--help'`;
}

function blockedMessage(error: ToolDefinitionChangedError): string {
  return `Tool '${error.toolName}' changed its definition since it was pinned (${error.pinnedHash.slice(0, 12)} -> ${error.currentHash.slice(0, 12)}); its calls are blocked until the change is approved.`;
}

function showError(printer: Printer, error: unknown, reason: string | undefined): void {
  if (error instanceof InterruptedError) {
    printer.lineErr(printer.style('yellow', 'interrupted', 'err'));
    return;
  }
  if (error instanceof PermissionDeniedError) {
    // The reason names the deciding rule (id, pattern, description): it is not repeated on a line of its own.
    printer.lineErr(`${printer.style('red', 'denied:', 'err')} ${visible(reason ?? error.reason)}`);
    return;
  }
  if (error instanceof ToolDefinitionChangedError) {
    // The library's message tells a program which method to call; here the fix is a command (the hint).
    printer.lineErr(`${printer.style('red', 'blocked:', 'err')} ${visible(blockedMessage(error))}`);
    return;
  }
  const message = visible(error instanceof Error ? error.message : String(error));
  printer.lineErr(`${printer.style('red', 'error:', 'err')} ${message}`);
}

/** `id (effect pattern): description`. */
export function describeRule(rule: {
  id: string;
  effect: string;
  pattern: string;
  description?: string | undefined;
}): string {
  const description = rule.description === undefined ? '' : `: ${visible(rule.description)}`;
  return `${rule.id} (${rule.effect} ${rule.pattern})${description}`;
}
