/** The server requests guide's sample (docs/snippets/server-requests/) against server-everything over stdio. */
import { describe, expect, it } from 'vitest';
import * as answerRequests from '../../docs/snippets/server-requests/answer-requests.js';

describe('server requests snippets', () => {
  it('answer-requests: elicitation answered with defaults, a root filtered out, sampling refused by policy, all audited', async () => {
    await expect(answerRequests.main()).resolves.toEqual({
      rootsSent: true,
      accepted: true,
      defaultFilled: true,
      samplingRefused: true,
      decisions: [
        'mcp:everything:elicitation allowed',
        'mcp:everything:roots allowed',
        'mcp:everything:roots denied',
        'mcp:everything:sampling denied',
      ],
    });
  });
});
