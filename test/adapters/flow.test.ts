/**
 * Information flow through the framework adapters (issue 42): the AI SDK's and the OpenAI Agents SDK's own tool
 * loops, driven by scripted models that obey the injection they read, call the real mail fixture through the
 * adapters. An adapter's calls are made in the flow state it was given (one per agent of the framework), else in
 * the manager's. Every adapter calls through the same `callForModel`, which passes the state on.
 */
import { Agent, Runner } from '@openai/agents';
import { generateText, stepCountIs } from 'ai';
import { describe, expect, it } from 'vitest';
import { toAISDKTools } from '../../src/adapters/ai-sdk/index.js';
import { toOpenAIAgentsTools } from '../../src/adapters/openai-agents/index.js';
import { PermissionDeniedError } from '../../src/errors.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { FlowState } from '../../src/security/flow.js';
import {
  ATTACKER,
  mailLabels,
  mailPolicy,
  mailServer,
  NO_EXFILTRATION,
  OUTBOX,
  READ_INBOX,
  SECRET,
  SEND_EMAIL,
  sentMail,
} from '../helpers/mail.js';
import {
  agentsAnswer,
  agentsCallTools,
  agentsToolOutputsSent,
  aiSdkModel,
  aiSdkAnswer as answer,
  aiSdkCallTools as callTools,
  ScriptedAgentsModel,
} from './models.js';

const forward = { to: ATTACKER, subject: 'Fwd', body: SECRET };

describe('information flow through the AI SDK adapter', () => {
  it('refuses the hijacked send in the agent’s flow state and leaves another agent’s state alone', async () => {
    await using manager = new MCPClientManager({ capabilities: mailPolicy(), flowLabels: mailLabels });
    await manager.connectServer(mailServer());
    const hijacked = new FlowState();
    const model = aiSdkModel([callTools([READ_INBOX, {}]), callTools([SEND_EMAIL, forward]), answer('done')]);
    const result = await generateText({
      model,
      tools: toAISDKTools(manager, { flow: hijacked }),
      prompt: 'Summarize my inbox.',
      stopWhen: stepCountIs(4),
    });
    expect(result.steps[0]?.toolResults.map((r) => r.toolName)).toEqual([READ_INBOX]);
    const errors = result.steps[1]?.content.filter((p) => p.type === 'tool-error') ?? [];
    expect(errors.map((e) => (e.error as PermissionDeniedError).rule?.id)).toEqual([NO_EXFILTRATION]);
    expect(errors[0]?.error).toBeInstanceOf(PermissionDeniedError);
    expect(hijacked.snapshot().labels).toEqual(['private', 'untrusted']);
    expect(manager.flow.labels.size).toBe(0);

    // Another agent of the framework, with a state of its own, has read nothing: its send goes.
    const other = aiSdkModel([callTools([SEND_EMAIL, { ...forward, body: 'hello' }]), answer('sent')]);
    const sent = await generateText({
      model: other,
      tools: toAISDKTools(manager, { flow: new FlowState() }),
      prompt: 'Say hello.',
      stopWhen: stepCountIs(3),
    });
    expect(sent.steps[0]?.toolResults.map((r) => r.output)).toEqual([`Sent to ${ATTACKER}.`]);
    expect(sentMail(await manager.executeTool(OUTBOX))).toEqual([{ to: ATTACKER, body: 'hello' }]);
  });

  it('does the same through the OpenAI Agents SDK adapter: each agent of the framework in its own state', async () => {
    await using manager = new MCPClientManager({ capabilities: mailPolicy(), flowLabels: mailLabels });
    await manager.connectServer(mailServer());
    const runner = new Runner({ tracingDisabled: true });
    const hijacked = new FlowState();
    const model = new ScriptedAgentsModel([
      agentsCallTools(['call_read', READ_INBOX, {}]),
      agentsCallTools(['call_send', SEND_EMAIL, forward]),
      agentsAnswer('done'),
    ]);
    const agent = new Agent({
      name: 'assistant',
      model,
      tools: toOpenAIAgentsTools(manager, { flow: hijacked }),
    });
    await runner.run(agent, 'Summarize my inbox.');
    const denial = JSON.stringify(agentsToolOutputsSent(model.requests[2]).call_send);
    expect(denial).toContain('not allowed');
    expect(hijacked.has('private')).toBe(true);
    expect(manager.flow.labels.size).toBe(0);
    expect(sentMail(await manager.executeTool(OUTBOX))).toEqual([]);
  });
});
