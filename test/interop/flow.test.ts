/**
 * Information flow through the manager (issue 42, CONTRACT 4) against the real mail fixture: the gate sees the
 * session's flow state and the target's labels, and what a tool, resource or prompt put in the context enters the
 * flow state with its content labels, so a send every rule allows is refused once private mail and an injection
 * were read.
 */
import { describe, expect, it } from 'vitest';
import { isInterlockError, PermissionDeniedError, ServerRequestError } from '../../src/errors.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { FlowState } from '../../src/security/flow.js';
import type { AccessRequest, AuditRecord, CheckContext } from '../../src/security/types.js';
import {
  ATTACKER,
  COLLEAGUE,
  carriesPrivateOut,
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
  USER_ADDRESS,
} from '../helpers/mail.js';

async function mailManager(capabilities = mailPolicy(), options: { audit?: AuditSinkLike } = {}) {
  const manager = new MCPClientManager({ capabilities, flowLabels: mailLabels, audit: options.audit });
  await manager.connectServer(mailServer());
  return manager;
}

type AuditSinkLike = { write(record: AuditRecord, request?: AccessRequest): void };

const send = (to: string, body: string) => ({ to, subject: 'Fwd: Confidential', body });

async function refusal(pending: Promise<unknown>): Promise<PermissionDeniedError> {
  const err = await pending.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof PermissionDeniedError)) throw new Error(`expected a denial, got ${String(err)}`);
  return err;
}

describe('information flow through the manager', () => {
  it('refuses a send every rule allows once private mail with an injection entered the session', async () => {
    await using manager = await mailManager();
    // Nothing read yet: the rules let mail go to anyone.
    expect(await manager.executeTool(SEND_EMAIL, send(ATTACKER, 'Lunch at noon?'))).toBe(
      `Sent to ${ATTACKER}.`,
    );
    expect(manager.flow.labels.size).toBe(0);

    const inbox = await manager.executeTool(READ_INBOX);
    expect(inbox).toContain(INJECTION);
    expect(manager.flow.snapshot()).toEqual({
      labels: ['private', 'untrusted'],
      sources: ['mcp:mail:read_inbox'],
    });

    // What the injection asks for is refused, whatever the body says; mail to the user still goes.
    const denied = await refusal(manager.callTool(SEND_EMAIL, send(ATTACKER, inbox)));
    expect(denied.rule?.id).toBe(NO_EXFILTRATION);
    await refusal(manager.callTool(SEND_EMAIL, send(ATTACKER, 'Nothing to see.')));
    expect(await manager.executeTool(SEND_EMAIL, send(USER_ADDRESS, inbox))).toBe(`Sent to ${USER_ADDRESS}.`);

    // The server was never asked to send the inbox to the attacker.
    expect(sentMail(await manager.executeTool(OUTBOX))).toEqual([
      { to: ATTACKER, body: 'Lunch at noon?' },
      { to: USER_ADDRESS, body: inbox },
    ]);
  });

  it('refuses a send whose arguments carry a fragment of the private mail, and no other', async () => {
    await using manager = await mailManager(mailPolicy(carriesPrivateOut));
    await manager.executeTool(READ_INBOX);
    // A fragment, normalized: other case and spacing, inside other text.
    const carrying = `fyi: ${SECRET.slice(4, 40).toUpperCase().replaceAll(' ', '   ')} (more later)`;
    const denied = await refusal(manager.callTool(SEND_EMAIL, send(COLLEAGUE, carrying)));
    expect(denied.rule?.id).toBe(NO_EXFILTRATION);
    expect(await manager.executeTool(SEND_EMAIL, send(COLLEAGUE, 'See you at the offsite.'))).toBe(
      `Sent to ${COLLEAGUE}.`,
    );
    expect(await manager.executeTool(SEND_EMAIL, send(USER_ADDRESS, carrying))).toBe(
      `Sent to ${USER_ADDRESS}.`,
    );
    // The attacker's address (22 characters) itself was read from the injection: with a window of 1, every fragment of
    // 20 characters is found, so any mail to it carries the inbox (the default window finds those of 35 or more).
    const exact = new FlowState({ windowSize: 1 });
    await manager.callTool(READ_INBOX, {}, { flow: exact });
    await refusal(manager.callTool(SEND_EMAIL, send(ATTACKER, 'hello'), { flow: exact }));
  });

  it('decides and records a call in the flow state it names, leaving the manager’s own alone', async () => {
    await using manager = await mailManager();
    const reader = new FlowState();
    const other = new FlowState();
    await manager.callTool(READ_INBOX, {}, { flow: reader });
    expect(reader.has('private')).toBe(true);
    expect(manager.flow.labels.size).toBe(0);
    expect(other.labels.size).toBe(0);
    await refusal(manager.callTool(SEND_EMAIL, send(ATTACKER, 'hi'), { flow: reader }));
    expect(await manager.executeTool(SEND_EMAIL, send(ATTACKER, 'hi'), { flow: other })).toBe(
      `Sent to ${ATTACKER}.`,
    );
    expect(await manager.executeTool(SEND_EMAIL, send(ATTACKER, 'hi'))).toBe(`Sent to ${ATTACKER}.`);
  });

  it('records an isError result as it records any result the model reads', async () => {
    await using manager = await mailManager();
    const result = await manager.callTool(READ_INBOX, { folder: 'spam' });
    expect(result.isError).toBe(true);
    expect(manager.flow.has('untrusted')).toBe(true);
    expect(manager.flow.carried({ body: SECRET }).carried).toContainEqual({
      argument: 'body',
      label: 'private',
      source: 'mcp:mail:read_inbox',
    });
  });

  it('records what a resource read and a prompt get put in the context, with their labels', async () => {
    await using manager = await mailManager();
    const fromResource = new FlowState();
    const read = await manager.readResource('mail', 'mail://inbox/1', { flow: fromResource });
    expect(JSON.stringify(read.contents)).toContain(SECRET);
    expect(fromResource.snapshot()).toEqual({
      labels: ['private', 'untrusted'],
      sources: ['mcp-resource:mail:mail://inbox/1'],
    });
    expect(fromResource.carried({ body: SECRET }).carried.map((c) => c.label)).toEqual([
      'private',
      'untrusted',
    ]);

    const fromPrompt = new FlowState();
    await manager.getPrompt('mail', 'reply_to', {}, { flow: fromPrompt });
    expect(fromPrompt.snapshot().sources).toEqual(['mcp-prompt:mail:reply_to']);
    expect(fromPrompt.carried({ body: INJECTION }).carried.length).toBeGreaterThan(0);

    // A JSON-RPC error reaches the model with the server's words in it: they enter as a result's would.
    const fromError = new FlowState();
    const failed = await manager
      .readResource('mail', 'mail://broken', { flow: fromError })
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ServerRequestError);
    expect(fromError.has('private')).toBe(true);
    expect(fromError.carried({ body: SECRET }).carried.length).toBeGreaterThan(0);
    // The manager's own state saw none of it, and its send still goes.
    expect(manager.flow.labels.size).toBe(0);
    expect(await manager.executeTool(SEND_EMAIL, send(ATTACKER, 'hi'))).toBe(`Sent to ${ATTACKER}.`);
  });

  it('hands the audit sink the session’s labels and sources with the denial: names, never the mail', async () => {
    const written: { record: AuditRecord; context: CheckContext | undefined }[] = [];
    const audit = {
      write: (record: AuditRecord, request?: AccessRequest) =>
        written.push({ record, context: request?.context }),
    };
    await using manager = await mailManager(mailPolicy(), { audit });
    await manager.executeTool(READ_INBOX);
    await refusal(manager.callTool(SEND_EMAIL, send(ATTACKER, SECRET)));
    const denial = written.find((w) => w.record.effect === 'deny');
    expect(denial?.record).toMatchObject({ ruleId: NO_EXFILTRATION, resource: 'mcp:mail:send_email' });
    expect(denial?.context?.labels).toEqual(['egress']);
    expect(denial?.context?.flow?.snapshot()).toEqual({
      labels: ['private', 'untrusted'],
      sources: ['mcp:mail:read_inbox'],
    });
    expect(JSON.stringify(denial?.record)).not.toContain(SECRET.slice(0, 20));
  });

  it('without a label resolver, target labels are unknown: a rule on them fails closed, and nothing is recorded', async () => {
    const seen: (readonly string[] | undefined)[] = [];
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:mail:*', 'execute', {
      when: (input) => {
        seen.push(input.labels);
        return input.flow !== undefined;
      },
    });
    await using manager = new MCPClientManager({ capabilities });
    await manager.connectServer(mailServer());
    expect(await manager.executeTool(READ_INBOX)).toContain(SECRET);
    expect(seen).toEqual([undefined]);
    expect(manager.flow.labels.size).toBe(0);

    await using strict = new MCPClientManager({ capabilities: mailPolicy() });
    await strict.connectServer(mailServer());
    const denied = await refusal(strict.callTool(OUTBOX, {}));
    expect(denied.rule?.id).toBe(NO_EXFILTRATION);
  });

  it('refuses a flow option that is not a FlowState, and a resolver without labelsFor, naming each', () => {
    let caught: unknown;
    try {
      new MCPClientManager({
        flow: { has: () => false } as unknown as FlowState,
        flowLabels: {} as unknown as typeof mailLabels,
      });
    } catch (err) {
      caught = err;
    }
    expect(isInterlockError(caught) && caught.code).toBe('INVALID_CONFIG');
    expect((caught as Error).message).toMatch(/flow: must be a FlowState/);
    expect((caught as Error).message).toMatch(/flowLabels: must have a labelsFor/);
  });
});
