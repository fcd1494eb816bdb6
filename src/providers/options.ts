/** Options are validated once, where they enter, with the field at fault named. */
import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import { describeIssues, toConfigIssues } from '../zod-issues.js';

/** Parses `options` with `schema`; throws `ConfigError` listing each bad field as `what.field`. */
export function parseOptions(schema: z.ZodType, options: unknown, what: string): void {
  const parsed = schema.safeParse(options);
  if (parsed.success) return;
  const issues = toConfigIssues(parsed.error, what);
  throw new ConfigError(`Invalid ${what} options: ${describeIssues(issues)}`, { issues });
}
