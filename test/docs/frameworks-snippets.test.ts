/**
 * The frameworks guide's samples (docs/snippets/frameworks/) run with each framework's own loop and a
 * scripted model against server-everything over stdio: the allowed echo comes back, the secret is refused.
 */
import { AIMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { setTracingDisabled } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import * as aiSdk from '../../docs/snippets/frameworks/ai-sdk.js';
import * as langchain from '../../docs/snippets/frameworks/langchain.js';
import * as mastra from '../../docs/snippets/frameworks/mastra.js';
import * as openaiAgents from '../../docs/snippets/frameworks/openai-agents.js';
import * as policy from '../../docs/snippets/frameworks/policy.js';
import {
  agentsAnswer,
  agentsCallTools,
  aiSdkAnswer,
  aiSdkCallTools,
  aiSdkModel,
  mastraModel,
  ScriptedAgentsModel,
} from '../adapters/models.js';

const ECHO = 'mcp__everything__echo';
const DENIED = "Permission denied: 'execute' on 'mcp:everything:echo'. ";

describe('frameworks snippets', () => {
  it('policy: connects server-everything behind the shared policy', async () => {
    await using manager = await policy.connectEverything();
    expect(manager.visibleTools().map((t) => t.name)).toEqual(
      expect.arrayContaining([ECHO, 'mcp__everything__get-tiny-image']),
    );
  });

  it('ai-sdk: the echo result, and the denial as a coded tool error', async () => {
    const model = aiSdkModel([
      aiSdkCallTools([ECHO, { message: 'hello' }], [ECHO, { message: 'secret plan' }]),
      aiSdkAnswer('I could echo hello, not the secret.'),
    ]);
    await expect(aiSdk.ask(model, 'Echo hello and my secret plan.')).resolves.toEqual({
      answer: 'I could echo hello, not the secret.',
      results: ['Echo: hello'],
      denials: ['CAPABILITY_DENIED'],
    });
  });

  it('langchain: a success and an error ToolMessage', async () => {
    const model = fakeModel()
      .respondWithTools([
        { name: ECHO, args: { message: 'hello' }, id: 'a' },
        { name: ECHO, args: { message: 'secret plan' }, id: 'b' },
      ])
      .respond(new AIMessage('I could echo hello, not the secret.'));
    const { answer, results } = await langchain.ask(model, 'Echo hello and my secret plan.');
    expect(answer).toBe('I could echo hello, not the secret.');
    expect(results[0]).toBe('success: Echo: hello');
    expect(results[1]).toContain(`error: Error: ${DENIED}`);
    expect(results[1]).toContain('Secrets stay on this machine.');
  });

  it('mastra: the echo result, and the denial as { error, message }', async () => {
    const { model } = mastraModel([
      {
        calls: [
          ['a', ECHO, { message: 'hello' }],
          ['b', ECHO, { message: 'secret plan' }],
        ],
      },
      { text: 'I could echo hello, not the secret.' },
    ]);
    const { answer, results } = await mastra.ask(model, 'Echo hello and my secret plan.');
    expect(answer).toBe('I could echo hello, not the secret.');
    expect(results[0]).toBe('Echo: hello');
    expect(results[1]).toMatchObject({ error: true, code: 'CAPABILITY_DENIED' });
    expect((results[1] as { message: string }).message).toContain('Secrets stay on this machine.');
  });

  it('openai-agents: the echo result, and the denial through errorFunction', async () => {
    setTracingDisabled(true);
    const model = new ScriptedAgentsModel([
      agentsCallTools(['a', ECHO, { message: 'hello' }], ['b', ECHO, { message: 'secret plan' }]),
      agentsAnswer('I could echo hello, not the secret.'),
    ]);
    const { answer, results } = await openaiAgents.ask(model, 'Echo hello and my secret plan.');
    expect(answer).toBe('I could echo hello, not the secret.');
    expect(results[0]).toBe('Echo: hello');
    expect(String(results[1])).toContain(`Error: ${DENIED}`);
  });
});
