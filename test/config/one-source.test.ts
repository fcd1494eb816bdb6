// Issue 15, "one source per fact": the `${VAR}` syntax and the secret-name rule are each defined once, and
// every reader (expansion, the secret collector, error messages about a file) agrees with that one definition.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expandString, variableNames } from '../../src/config/env.js';
import { describeValue, isSensitivePath } from '../../src/config/file-issues.js';
import { collectSecretValues } from '../../src/config/secrets.js';
import type { ConfigIssue } from '../../src/errors.js';
import { SECRET_NAME } from '../../src/redact.js';

const NAMES = ['A', 'TOKEN', 'b_2', 'ENV'] as const;
/** Each variable's value is long and distinct, so it is visible in an expansion and kept as a secret. */
const ENV: Record<string, string> = Object.fromEntries(NAMES.map((n) => [n, `value-of-${n}-xyz`]));

// Text made of plain words and every spelling of a reference, well formed or not.
const piece = fc.oneof(
  fc.constantFrom('plain ', 'x', '$', '{', '}', '${', '${1A}', '${env:}', '${input:pick}', ':-'),
  fc.constantFrom(...NAMES, 'UNSET').map((n) => `\${${n}}`),
  fc.constantFrom(...NAMES).map((n) => `\${env:${n}}`),
  fc.constantFrom(...NAMES, 'UNSET').map((n) => `\${${n}:-fallback}`),
);
const text = fc.array(piece, { maxLength: 8 }).map((parts) => parts.join(''));

describe('the one ${VAR} syntax', () => {
  it('finds the variables that expansion substitutes, and the collector keeps exactly their values', () => {
    fc.assert(
      fc.property(text, (value) => {
        const issues: ConfigIssue[] = [];
        const expanded = expandString(value, 'field', ENV, issues);
        const referenced = new Set(variableNames(value));
        for (const name of NAMES) {
          // A value shows up in the expansion exactly when the one syntax says the text references it.
          expect(expanded.includes(ENV[name] as string), `${name} in ${JSON.stringify(value)}`).toBe(
            referenced.has(name),
          );
        }
        const secrets = new Set<string>();
        collectSecretValues(value, ENV, secrets);
        expect([...secrets].sort()).toEqual(
          [...referenced]
            .filter((n) => ENV[n] !== undefined)
            .map((n) => ENV[n])
            .sort(),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('names an unset variable without a default, and never the value of a set one', () => {
    const issues: ConfigIssue[] = [];
    expect(expandString('Bearer ${TOKEN} ${MISSING}', 'headers.Authorization', ENV, issues)).toBe(
      'Bearer value-of-TOKEN-xyz ',
    );
    expect(issues).toEqual([
      {
        path: 'headers.Authorization',
        message: "environment variable 'MISSING' is not set (set it, or write ${MISSING:-default})",
      },
    ]);
  });
});

describe('the one secret-name rule', () => {
  it('hides in file errors every value the redactor treats as a secret by its name', () => {
    for (const name of [
      'apiKey',
      'X-Session-Id',
      'bearerToken',
      'password',
      'passphrase',
      'Cookie',
      'credentials',
    ]) {
      expect(SECRET_NAME.test(name)).toBe(true);
      expect(isSensitivePath(['http', name])).toBe(true);
      expect(describeValue('hunter2-long-value', ['servers', 'x', name])).toBe('a string (not shown)');
    }
    expect(isSensitivePath(['servers', 'x', 'command'])).toBe(false);
    expect(describeValue('npx', ['servers', 'x', 'command'])).toBe('"npx"');
  });
});
