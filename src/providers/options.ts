/** Options are validated once, where they enter, with the field at fault named. */
import type { z } from 'zod';
import { ConfigError } from '../errors.js';

/** Parses `options` with `schema`; throws `ConfigError` listing each bad field as `what.field`. */
export function parseOptions(schema: z.ZodType, options: unknown, what: string): void {
  const parsed = schema.safeParse(options);
  if (parsed.success) return;
  const issues = parsed.error.issues.map((i) => ({
    path: [what, ...i.path.map(String)].join('.'),
    message: i.message,
  }));
  throw new ConfigError(
    `Invalid ${what} options: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    {
      issues,
    },
  );
}
