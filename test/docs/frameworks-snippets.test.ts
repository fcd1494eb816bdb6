/**
 * The frameworks guide's samples (docs/snippets/frameworks/) run with each framework's own loop against
 * server-everything over stdio: the allowed echo comes back, the secret is refused. The scripted models are the
 * guide's own offline tests (docs/snippets/frameworks/offline/), each built with its framework's facility, and
 * they run here as they are: importing a file registers its tests in this one.
 */
import { describe, expect, it } from 'vitest';
import * as aiSdk from '../../docs/snippets/frameworks/ai-sdk.js';
import * as langchain from '../../docs/snippets/frameworks/langchain.js';
import * as mastra from '../../docs/snippets/frameworks/mastra.js';
import * as openaiAgents from '../../docs/snippets/frameworks/openai-agents.js';
import * as policy from '../../docs/snippets/frameworks/policy.js';

describe('frameworks snippets', () => {
  it('policy: connects server-everything behind the shared policy', async () => {
    await using manager = await policy.connectEverything();
    expect(manager.visibleTools().map((t) => t.name)).toEqual(
      expect.arrayContaining(['mcp__everything__echo', 'mcp__everything__get-tiny-image']),
    );
  });

  it('each framework sample takes its model as an argument, so a test can script it', () => {
    for (const sample of [aiSdk, langchain, mastra, openaiAgents]) expect(sample.ask).toHaveLength(2);
  });
});

// Issue 39: the guide shows how to run each agent offline; these are those files.
describe('offline tests the guide shows', async () => {
  await import('../../docs/snippets/frameworks/offline/ai-sdk.test.js');
  await import('../../docs/snippets/frameworks/offline/langchain.test.js');
  await import('../../docs/snippets/frameworks/offline/mastra.test.js');
  await import('../../docs/snippets/frameworks/offline/openai-agents.test.js');
});
