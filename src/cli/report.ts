/** How a command's error is shown: a line (or a few) on stderr, or `{ "error": {...} }` with `--json`. */
import {
  ConfigError,
  isInteropError,
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
  if (isInteropError(error) && error.server !== undefined) out.server = error.server;
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
export function reportError(printer: Printer, error: unknown): number {
  const exitCode = exitCodeFor(error);
  const hint = error instanceof HintedError ? error.hint : undefined;
  if (error instanceof HintedError) error = error.error;
  if (printer.json) {
    printer.data({ error: { ...errorData(error), ...(hint === undefined ? {} : { hint }), exitCode } });
    return exitCode;
  }
  showError(printer, error, exitCode);
  if (hint !== undefined) printer.lineErr(`  hint: ${visible(hint)}`);
  return exitCode;
}

function showError(printer: Printer, error: unknown, exitCode: number): void {
  if (error instanceof InterruptedError) {
    printer.lineErr(printer.style('yellow', 'interrupted', 'err'));
    return;
  }
  const message = visible(error instanceof Error ? error.message : String(error));
  if (error instanceof PermissionDeniedError) {
    printer.lineErr(`${printer.style('red', 'denied:', 'err')} ${visible(error.reason)}`);
    if (error.rule !== undefined) printer.lineErr(`  rule: ${describeRule(error.rule)}`);
    return;
  }
  if (error instanceof ToolDefinitionChangedError) {
    printer.lineErr(`${printer.style('red', 'blocked:', 'err')} ${message}`);
    printer.lineErr(
      `  review the change with: interlock pins; then approve what you reviewed: interlock pins --approve ${error.toolName} --hash ${error.currentHash.slice(0, 12)}`,
    );
    return;
  }
  printer.lineErr(`${printer.style('red', 'error:', 'err')} ${message}`);
  if (error instanceof ToolNotFoundError && !error.toolName.startsWith('mcp__')) {
    printer.lineErr("  tools are named mcp__{server}__{tool}; 'interlock tools' lists them");
  }
  if (
    exitCode === ExitCode.USAGE &&
    !(error instanceof ConfigError) &&
    !(error instanceof ToolNotFoundError)
  ) {
    printer.lineErr("  see 'interlock --help'");
  }
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
