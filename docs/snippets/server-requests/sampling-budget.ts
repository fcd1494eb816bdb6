// A sampling budget: a server may use your model, within limits the policy sets. Requests outside it are
// refused with an error that says the refusal is the client's, and your handler (and model) never sees them.
import { createRequire } from 'node:module';
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet, MemoryAuditSink } from 'mcp-interlock/security';

const everything = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

export async function main() {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:everything:*', 'execute');
  capabilities.grant('mcp:everything:sampling', 'request', {
    id: 'sampling-budget',
    maxCalls: 2, // calls per window...
    per: '1h', // ...of one hour
    when: {
      args: {
        maxTokens: { max: 200 }, // tokens per request
        models: { each: { oneOf: ['claude-haiku', 'gpt-mini'] } }, // the model hints it may name
        tools: { each: { oneOf: ['search'] } }, // tools it may offer the sampled model
      },
    },
  });
  const audit = new MemoryAuditSink();
  let samples = 0;

  await using manager = new MCPClientManager({
    capabilities,
    audit,
    onSampling: () => {
      samples++;
      return { role: 'assistant', model: 'claude-haiku', content: { type: 'text', text: 'a short poem' } };
    },
  });
  await manager.connectServer({
    name: 'everything',
    transport: 'stdio',
    command: process.execPath,
    args: [everything, 'stdio'],
  });

  const sample = (maxTokens: number) =>
    manager.executeTool('mcp__everything__trigger-sampling-request', { prompt: 'A poem.', maxTokens });
  const small = await sample(50);
  const large = await sample(5000);
  const second = await sample(50);
  const third = await sample(50);
  return {
    smallAnswered: small.includes('a short poem'), // true
    largeRefused: large.includes('The client (Interlock) refused this sampling request by its policy'), // true
    secondAnswered: second.includes('a short poem'), // true
    thirdRefused: third.includes('refused this sampling request'), // true: two calls per hour
    samples, // 2: the handler never saw the refused ones
  };
}
