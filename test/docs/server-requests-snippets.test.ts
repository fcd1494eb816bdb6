/** The server requests guide's samples (docs/snippets/server-requests/) against server-everything over stdio. */
import { describe, expect, it } from 'vitest';
import * as agentHandlers from '../../docs/snippets/server-requests/agent-handlers.js';
import * as answerRequests from '../../docs/snippets/server-requests/answer-requests.js';
import * as samplingBudget from '../../docs/snippets/server-requests/sampling-budget.js';
import * as urlElicitation from '../../docs/snippets/server-requests/url-elicitation.js';

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

  it('url-elicitation: an allowlisted host reaches the handler, another is declined, javascript: is refused', async () => {
    await expect(urlElicitation.main()).resolves.toEqual({
      allowedOpened: true,
      otherHostDeclined: true,
      scriptRefused: true,
      shown: [
        {
          host: 'modelcontextprotocol.io',
          punycode: false,
          url: 'https://modelcontextprotocol.io/specification',
        },
      ],
    });
  });

  it('sampling-budget: tokens and calls per hour bound what a server may sample', async () => {
    await expect(samplingBudget.main()).resolves.toEqual({
      smallAnswered: true,
      largeRefused: true,
      secondAnswered: true,
      thirdRefused: true,
      samples: 2,
    });
  });

  it("agent-handlers: createAgent's onElicitation answers the agent's server, audited under its name", async () => {
    await expect(agentHandlers.main()).resolves.toEqual({
      answer: 'Signed up.',
      askedBy: ['everything: Please provide inputs for the following fields:'],
      answered: true,
      decision: ['signup mcp:everything:elicitation allowed'],
    });
  });
});
