/** The server requests guide's sample (docs/snippets/server-requests/) against server-everything over stdio. */
import { describe, expect, it } from 'vitest';
import * as answerRequests from '../../docs/snippets/server-requests/answer-requests.js';

describe('server requests snippets', () => {
  it('answer-requests: elicitation answered with defaults, sampling refused by policy, both audited', async () => {
    await expect(answerRequests.main()).resolves.toEqual({
      accepted: true,
      defaultFilled: true,
      samplingRefused: true,
      decisions: ['mcp:everything:elicitation allowed', 'mcp:everything:sampling denied'],
    });
  });
});
