/**
 * `toOpenAIAgentsTools` against the real OpenAI Agents SDK (0.14, the newest on Node 20): the SDK's `Runner`
 * loop, driven by a scripted `Model` (the SDK accepts any object with `getResponse`), calls
 * server-everything's tools through the manager's gate. Tracing is off: nothing leaves the machine.
 */
import { Agent, Runner } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { toOpenAIAgentsTools } from '../../src/adapters/openai-agents/index.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/index.js';
import { ECHO, GET_SUM, PNG_BASE64_PREFIX, SECRET_REASON, TINY_IMAGE, useEverything } from './helpers.js';
import {
  agentsAnswer as answer,
  agentsCallTools as callTools,
  ScriptedAgentsModel,
  agentsToolOutputsSent as toolOutputsSent,
} from './models.js';

/** The names the SDK gives the tools with a '-'. */
const TINY_IMAGE_NAME = TINY_IMAGE.replaceAll('-', '_');
const GET_SUM_NAME = GET_SUM.replaceAll('-', '_');

/** The text of a function call output, whichever shape the SDK stored it in. */
function textOf(output: unknown): string {
  if (typeof output === 'string') return output;
  if (typeof output === 'object' && output !== null && 'text' in output) return String(output.text);
  return JSON.stringify(output);
}

describe('toOpenAIAgentsTools with the OpenAI Agents SDK loop', () => {
  const setup = useEverything();
  const runner = new Runner({ tracingDisabled: true });

  it("hands out the tools the policy could allow, with the servers' JSON Schemas", () => {
    const tools = toOpenAIAgentsTools(setup.manager);
    // The SDK keeps letters, digits and _ in a tool name.
    expect(tools.map((t) => t.name).sort()).toEqual([ECHO, TINY_IMAGE_NAME]);
    const echo = tools.find((t) => t.name === ECHO);
    expect(echo?.strict).toBe(false);
    expect(echo?.parameters).toEqual(setup.manager.getTool(ECHO)?.inputSchema);
  });

  it('runs an allowed call on the server and gives the model a denied one through errorFunction', async () => {
    const model = new ScriptedAgentsModel([
      callTools(
        ['call_ok', ECHO, { message: 'hello from the Agents SDK' }],
        ['call_denied', ECHO, { message: 'secret plan' }],
      ),
      answer('done'),
    ]);
    const agent = new Agent({ name: 'echoer', model, tools: toOpenAIAgentsTools(setup.manager) });
    const sentBefore = setup.sentCalls();

    const result = await runner.run(agent, 'Echo two things.');

    expect(result.finalOutput).toBe('done');
    const sent = toolOutputsSent(model.requests[1]);
    expect(textOf(sent.call_ok)).toBe('Echo: hello from the Agents SDK');
    expect(textOf(sent.call_denied)).toContain(SECRET_REASON);
    expect(textOf(sent.call_denied)).toContain('do not retry');
    expect(setup.sentCalls() - sentBefore).toBe(1);
  });

  it('refuses a tool outside the policy even when every tool is handed out', async () => {
    const model = new ScriptedAgentsModel([
      callTools(['call_sum', GET_SUM_NAME, { a: 1, b: 2 }]),
      answer('ok'),
    ]);
    const agent = new Agent({
      name: 'adder',
      model,
      tools: toOpenAIAgentsTools(setup.manager, { tools: 'all' }),
    });
    const sentBefore = setup.sentCalls();
    await runner.run(agent, 'Add.');
    expect(textOf(toolOutputsSent(model.requests[1]).call_sum)).toContain(
      "Permission denied: 'execute' on 'mcp:everything:get-sum'",
    );
    expect(setup.sentCalls()).toBe(sentBefore);
  });

  it('sends an image result as text by default and as an image output with results: content', async () => {
    const run = async (results: 'text' | 'content') => {
      const model = new ScriptedAgentsModel([callTools(['call_image', TINY_IMAGE_NAME, {}]), answer('seen')]);
      const agent = new Agent({
        name: 'viewer',
        model,
        tools: toOpenAIAgentsTools(setup.manager, { toolResults: results }),
      });
      await runner.run(agent, 'Show me.');
      return toolOutputsSent(model.requests[1]).call_image;
    };

    const text = await run('text');
    expect(textOf(text)).toContain('[image: image/png,');
    expect(JSON.stringify(text)).not.toContain(PNG_BASE64_PREFIX);

    const content = (await run('content')) as { type: string; [k: string]: unknown }[];
    expect(Array.isArray(content)).toBe(true);
    expect(content.map((p) => p.type)).toEqual(['input_text', 'input_image']);
    expect(JSON.stringify(content[1])).toContain(PNG_BASE64_PREFIX);
  });

  it("leaves out only the tools the SDK would give one name, with a warning, and keeps every other server's", async () => {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:weird:*', 'execute');
    capabilities.grant('mcp:echo:*', 'execute');
    await using manager = new MCPClientManager({ capabilities });
    // The weird-names fixture has both `read_file` and `read-file`: the SDK names both `..._read_file`.
    await manager.connectServer({ name: 'weird', transport: 'stdio', ...nodeFixture('weird-names') });
    await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
    const warnings: string[] = [];
    const tools = toOpenAIAgentsTools(manager, { onWarning: (message) => warnings.push(message) });
    const names = tools.map((t) => t.name);
    expect(names).not.toContain('mcp__weird__read_file');
    expect(names).toContain('mcp__weird__CamelCase');
    expect(names.filter((n) => n.startsWith('mcp__echo__'))).toEqual(
      manager.tools.filter((t) => t.server === 'echo').map((t) => t.name),
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^Tools 'mcp__weird__read_file' and 'mcp__weird__read-file' would all be named 'mcp__weird__read_file'/,
    );
    expect(warnings[0]).toContain('none of them is handed out');
    // Filtered down to one, it is handed out, with no warning.
    const one = toOpenAIAgentsTools(manager, {
      filter: (t) => t.tool !== 'read-file',
      onWarning: (message) => warnings.push(message),
    });
    expect(one.filter((t) => t.name === 'mcp__weird__read_file')).toHaveLength(1);
    expect(warnings).toHaveLength(1);
  });
});
