// Answer what a server asks of you: a question for the user, a model completion, the roots it may see.
// Each request passes the CapabilitySet first; what is not granted is refused without calling your handler.
import { createRequire } from 'node:module';
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet, MemoryAuditSink } from 'mcp-interlock/security';

const everything = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

export async function main() {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:everything:*', 'execute');
  capabilities.grant('mcp:everything:elicitation', 'request'); // may ask the user
  // May see the project's root, and no other: each root is decided on its path.
  capabilities.grant('mcp:everything:roots', 'request', {
    when: { args: { path: { startsWith: '/home/ada/project' } } },
  });
  // No grant for mcp:everything:sampling: its requests are refused with an error.
  const audit = new MemoryAuditSink();

  await using manager = new MCPClientManager({
    capabilities,
    audit,
    // A real app shows request.message and a form for request.requestedSchema.
    onElicitation: () => ({ action: 'accept', content: { name: 'Ada' } }),
    onSampling: () => ({
      role: 'assistant',
      model: 'my-model',
      content: { type: 'text', text: 'never sent' },
    }),
    roots: [
      { uri: 'file:///home/ada/project', name: 'project' },
      { uri: 'file:///home/ada/.ssh', name: 'keys' }, // never sent: the policy does not allow it
    ],
  });
  await manager.connectServer({
    name: 'everything',
    transport: 'stdio',
    command: process.execPath,
    args: [everything, 'stdio'],
  });

  const answered = await manager.executeTool('mcp__everything__trigger-elicitation-request', {});
  const sampled = await manager.executeTool('mcp__everything__trigger-sampling-request', {
    prompt: 'A haiku, please.',
    maxTokens: 50,
  });
  const roots = await manager.executeTool('mcp__everything__get-roots-list', {});
  return {
    rootsSent: roots.includes('file:///home/ada/project') && !roots.includes('.ssh'), // true
    accepted: answered.includes('"name": "Ada"'), // true
    defaultFilled: answered.includes('"integer": 42'), // true: the schema's default (SEP-1034)
    samplingRefused: sampled.includes('The client (Interlock) refused this sampling request by its policy'), // true
    decisions: [
      ...new Set(
        audit.records
          .filter((r) => r.action === 'request')
          .map((r) => `${r.resource} ${r.allowed ? 'allowed' : 'denied'}`),
      ),
    ].sort(),
    // elicitation allowed; roots allowed (project) and denied (.ssh); sampling denied
  };
}
