/** Exit codes (documented in `--help`) and how errors map to them. */
import { InterlockError, isInterlockError } from '../errors.js';

/** The CLI's exit codes. */
export const ExitCode = {
  /** Done. */
  OK: 0,
  /** Something failed: a server did not connect, a tool reported an error, a request failed. */
  ERROR: 1,
  /** Bad usage or config: unknown option, bad `--args`, invalid project file, unknown tool. */
  USAGE: 2,
  /** The policy denied the call (or it needs an approval nobody gave, or its definition changed). */
  DENIED: 3,
  /**
   * A check of the policy found something: a policy test failed (`interlock policy test`), or, with `--strict`,
   * `interlock policy check` found a rule that can never match.
   */
  CHECK_FAILED: 4,
  /** Interrupted with Ctrl-C. */
  INTERRUPTED: 130,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A mistake in how the CLI was called (bad `--args`, unknown server). Exit code 2. */
export class UsageError extends Error {
  readonly code = 'INVALID_USAGE';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The command was interrupted (Ctrl-C). Exit code 130. */
export class InterruptedError extends Error {
  readonly code = 'INTERRUPTED';

  constructor() {
    super('Interrupted.');
    this.name = new.target.name;
  }
}

/**
 * An error with advice for the person at the terminal: a `hint` (a line or a few; a `hint` field with `--json`),
 * optionally the reason said in CLI terms, and extra `--json` fields.
 */
export class HintedError extends Error {
  readonly error: unknown;
  readonly hint: string | undefined;
  /** Replaces the reason of a denial (the library's may name an API call). */
  readonly reason: string | undefined;
  /** Added to the `--json` error. */
  readonly data: Record<string, unknown> | undefined;

  constructor(
    error: unknown,
    hint: string | undefined,
    options: { reason?: string | undefined; data?: Record<string, unknown> | undefined } = {},
  ) {
    super(error instanceof Error ? error.message : String(error), { cause: error });
    this.name = new.target.name;
    this.error = error;
    this.hint = hint;
    this.reason = options.reason;
    this.data = options.data;
  }
}

const USAGE_CODES = new Set(['INVALID_CONFIG', 'INVALID_POLICY', 'TOOL_NOT_FOUND', 'INVALID_TOOL_INPUT']);
const DENIED_CODES = new Set(['CAPABILITY_DENIED', 'TOOL_DEFINITION_CHANGED', 'POLICY_NOT_REVIEWED']);

/** The exit code for an error a command ended with. */
export function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof HintedError) return exitCodeFor(error.error);
  if (error instanceof InterruptedError) return ExitCode.INTERRUPTED;
  if (error instanceof UsageError) return ExitCode.USAGE;
  if (error instanceof InterlockError || isInterlockError(error)) {
    if (USAGE_CODES.has(error.code)) return ExitCode.USAGE;
    if (DENIED_CODES.has(error.code)) return ExitCode.DENIED;
  }
  return ExitCode.ERROR;
}
