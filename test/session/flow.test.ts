/**
 * Information flow in sessions built with SessionInteropMixin (issue 42) against the real mail fixture: a session
 * owns a flow state, its `tools` call in it, and sessions sharing one manager never share what they read. A view
 * for a sub-agent (GatedToolView) calls in a state derived from its parent's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { GatedToolView } from '../../src/session/gated-view.js';
import { SessionInteropMixin, type SessionInteropOptions } from '../../src/session/mixin.js';
import type { ToolWrapper } from '../../src/tools/tool-wrapper.js';
import { descendantPids } from '../helpers/index.js';
import {
  ATTACKER,
  mailLabels,
  mailPolicy,
  mailServer,
  NO_EXFILTRATION,
  READ_INBOX,
  SEND_EMAIL,
} from '../helpers/mail.js';

afterEach(() => {
  expect(descendantPids(process.pid)).toEqual([]);
});

/** A user's session class. */
class Chat {
  constructor(readonly options: { interop?: SessionInteropOptions }) {}
}
const McpChat = SessionInteropMixin(Chat);

const mail = { to: ATTACKER, subject: 'hi', body: 'hello' };

function tool(tools: readonly ToolWrapper[], name: string): ToolWrapper {
  const found = tools.find((t) => t.name === name);
  if (found === undefined) throw new Error(`no tool ${name}`);
  return found;
}

describe('information flow in mixed sessions', () => {
  it('calls its tools in its own flow state: the manager’s, when the session owns it', async () => {
    await using session = new McpChat({
      interop: {
        mcpServers: [mailServer()],
        managerOptions: { capabilities: mailPolicy(), flowLabels: mailLabels },
      },
    });
    await session.start();
    expect(session.flow).toBe(session.mcp.flow);
    expect(await tool(session.tools, SEND_EMAIL).execute(mail)).toBe(`Sent to ${ATTACKER}.`);
    await tool(session.tools, READ_INBOX).execute({});
    expect(session.flow.snapshot().labels).toEqual(['private', 'untrusted']);
    await expect(tool(session.tools, SEND_EMAIL).execute(mail)).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
      rule: { id: NO_EXFILTRATION },
    });
  });

  it('keeps sessions on a shared manager apart: each reads and is decided in its own state', async () => {
    await using manager = new MCPClientManager({ capabilities: mailPolicy(), flowLabels: mailLabels });
    await manager.connectServer(mailServer());
    await using reader = new McpChat({ interop: { manager } });
    await using sender = new McpChat({ interop: { manager } });
    await reader.start();
    await sender.start();
    expect(reader.flow).not.toBe(manager.flow);
    expect(reader.flow).not.toBe(sender.flow);

    await tool(reader.tools, READ_INBOX).execute({});
    expect(reader.flow.has('private')).toBe(true);
    await expect(tool(reader.tools, SEND_EMAIL).execute(mail)).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
    });
    // Neither the other session nor the manager's own state saw the read.
    expect(sender.flow.labels.size).toBe(0);
    expect(manager.flow.labels.size).toBe(0);
    expect(await tool(sender.tools, SEND_EMAIL).execute(mail)).toBe(`Sent to ${ATTACKER}.`);
  });

  it('calls a sub-agent’s view in a state derived from its parent’s, and brings its reads back', async () => {
    const capabilities = mailPolicy();
    await using parent = new McpChat({
      interop: { mcpServers: [mailServer()], managerOptions: { capabilities, flowLabels: mailLabels } },
    });
    await parent.start();
    const child = new GatedToolView(parent.mcp, {
      capabilities: capabilities.derive([{ effect: 'allow', resource: 'mcp:mail:*', actions: 'execute' }]),
      flow: parent.flow.derive(),
    });
    expect(child.flow).not.toBe(parent.flow);
    expect(await child.executeTool(SEND_EMAIL, mail)).toBe(`Sent to ${ATTACKER}.`);
    await tool(child.tools, READ_INBOX).execute({});
    expect(child.flow.has('private')).toBe(true);
    expect(parent.flow.has('private')).toBe(true);
    await expect(tool(parent.tools, SEND_EMAIL).execute(mail)).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
    });
  });
});
