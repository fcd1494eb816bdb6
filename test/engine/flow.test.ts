/**
 * Information flow in the engine's agents (issue 42) against the real mail fixture: each agent has its own flow
 * state, passed on every call it makes (MCP and native); a sub-agent's is derived from its parent's. A worst-case
 * (fully hijacked) model is played by a scripted one that does what the injection says.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import { defineTool } from '../../src/session/native-tool.js';
import { scriptedModel, useTool } from '../../src/testing/index.js';
import { descendantPids } from '../helpers/index.js';
import {
  ATTACKER,
  INJECTION,
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

afterEach(() => {
  expect(descendantPids(process.pid)).toEqual([]);
});

const forward = { to: ATTACKER, subject: 'Fwd: Confidential', body: SECRET };

function mailEngine(): Engine {
  return new Engine({ defaultModel: scriptedModel(['ok']), managerOptions: { flowLabels: mailLabels } });
}

describe('information flow in agents', () => {
  it('refuses the send an injection asks a hijacked agent for, though its rules allow reading and sending', async () => {
    await using engine = mailEngine();
    const agent = await engine.createAgent({
      name: 'assistant',
      capabilities: mailPolicy(),
      mcpServers: [mailServer()],
      // The model reads the inbox, then obeys the injection in it.
      model: scriptedModel([useTool(READ_INBOX), useTool(SEND_EMAIL, forward), 'Done.']),
    });
    const result = await agent.run('Summarize my inbox.');
    expect(result.steps.map((s) => [s.tool, s.decision])).toEqual([
      [READ_INBOX, 'allow'],
      [SEND_EMAIL, 'deny'],
    ]);
    expect(result.steps[0]?.output).toContain(INJECTION);
    expect(result.steps[1]?.ruleId).toBe(NO_EXFILTRATION);
    expect(agent.flow.snapshot()).toEqual({
      labels: ['private', 'untrusted'],
      sources: ['mcp:mail:read_inbox'],
    });
    expect(sentMail((await agent.callTool(OUTBOX)).text)).toEqual([]);
  });

  it('keeps agents apart: a fresh agent is not decided by what another one read', async () => {
    await using engine = mailEngine();
    const reader = await engine.createAgent({
      name: 'reader',
      capabilities: mailPolicy(),
      mcpServers: [mailServer()],
    });
    const sender = await engine.createAgent({
      name: 'sender',
      capabilities: mailPolicy(),
      mcpServers: [mailServer()],
    });
    await reader.callTool(READ_INBOX);
    await expect(reader.callTool(SEND_EMAIL, forward)).rejects.toMatchObject({ code: 'CAPABILITY_DENIED' });
    expect(sender.flow.labels.size).toBe(0);
    expect((await sender.callTool(SEND_EMAIL, { ...forward, body: 'hello' })).text).toBe(
      `Sent to ${ATTACKER}.`,
    );
  });

  it('gives a sub-agent its parent’s labels, and brings what the sub-agent reads back to its parent', async () => {
    await using engine = mailEngine();
    const rules = [{ effect: 'allow' as const, resource: 'mcp:mail:*', actions: 'execute' }];

    const lead = await engine.createAgent({
      name: 'lead',
      capabilities: mailPolicy(),
      mcpServers: [mailServer()],
    });
    await lead.callTool(READ_INBOX);
    const helper = await lead.spawn({ name: 'helper', capabilities: rules });
    expect(helper.flow.has('private')).toBe(true);
    await expect(helper.callTool(SEND_EMAIL, forward)).rejects.toMatchObject({ code: 'CAPABILITY_DENIED' });

    const second = await engine.createAgent({
      name: 'second',
      capabilities: mailPolicy(),
      mcpServers: [mailServer()],
    });
    const scout = await second.spawn({ name: 'scout', capabilities: rules });
    expect(second.flow.labels.size).toBe(0);
    await scout.callTool(READ_INBOX);
    expect(second.flow.snapshot().labels).toEqual(['private', 'untrusted']);
    await expect(second.callTool(SEND_EMAIL, forward)).rejects.toMatchObject({ code: 'CAPABILITY_DENIED' });
  });

  it('records a native tool’s result with its labels, and decides native calls in the agent’s flow', async () => {
    const flowsSeen: boolean[] = [];
    const fetchPage = defineTool({
      name: 'fetch_page',
      description: 'Fetches a web page.',
      execute: () => `Welcome! ${INJECTION}`,
    });
    const note = defineTool({ name: 'note', description: 'Takes a note.', execute: () => 'noted' });
    await using engine = mailEngine();
    const capabilities = mailPolicy();
    capabilities.deny('tool:note', 'execute', {
      id: 'no-notes-after-the-web',
      when: (input) => {
        flowsSeen.push(input.flow !== undefined);
        return input.flow?.has('untrusted') ?? true;
      },
    });
    const agent = await engine.createAgent({ name: 'browser', capabilities, tools: [fetchPage, note] });
    expect((await agent.callTool('note')).text).toBe('noted');
    await agent.callTool('fetch_page');
    expect(agent.flow.snapshot()).toEqual({ labels: ['untrusted'], sources: ['tool:fetch_page'] });
    await expect(agent.callTool('note')).rejects.toMatchObject({ code: 'CAPABILITY_DENIED' });
    // Every decision on the native tool saw the agent's flow state.
    expect(flowsSeen.length).toBeGreaterThanOrEqual(2);
    expect(flowsSeen.every((seen) => seen)).toBe(true);
  });

  it('labels native tools by the agent’s own policy when no resolver is given, as its MCP tools are', async () => {
    const fetchPage = defineTool({
      name: 'fetch_page',
      description: 'Fetches a web page.',
      execute: () => `Welcome! ${INJECTION}`,
    });
    const note = defineTool({ name: 'note', description: 'Takes a note.', execute: () => 'noted' });
    await using engine = new Engine({ defaultModel: scriptedModel(['ok']) });
    const agent = await engine.createAgent({
      name: 'browser',
      tools: [fetchPage, note],
      capabilities: {
        version: 1,
        // Only what the policy says: no labels derived from the (absent) annotations of either tool.
        flow: { hints: false },
        labels: [{ resource: 'tool:fetch_page', labels: ['untrusted'] }],
        rules: [
          { effect: 'allow', resource: 'tool:*', actions: 'execute' },
          {
            id: 'no-notes-after-the-web',
            effect: 'deny',
            resource: 'tool:note',
            actions: 'execute',
            when: { flow: { seen: ['untrusted'] } },
          },
        ],
      },
    });
    expect((await agent.callTool('note')).text).toBe('noted');
    await agent.callTool('fetch_page');
    expect(agent.flow.snapshot()).toEqual({ labels: ['untrusted'], sources: ['tool:fetch_page'] });
    await expect(agent.callTool('note')).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
      rule: { id: 'no-notes-after-the-web' },
    });
  });
});
