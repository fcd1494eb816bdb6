// A long-running tool that answers with a task handle: the caller still holds one promise. Interlock polls the
// task at the server's interval, reports each status change as progress, answers the input the task asks for
// through the policy and your handler, and sends tasks/cancel when the call is aborted or times out.
import { createRequire } from 'node:module';
import { isInterlockError } from 'mcp-interlock';
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

const everything = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);
const RESEARCH = 'mcp__everything__simulate-research-query'; // a task tool: taskSupport 'required'

export async function main() {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:everything:simulate-research-query', 'execute');
  capabilities.grant('mcp:everything:elicitation', 'request'); // the task may ask the user
  await using manager = new MCPClientManager({
    capabilities,
    // A real app shows request.message and a form for request.requestedSchema.
    onElicitation: () => ({ action: 'accept', content: { interpretation: 'programming' } }),
  });
  await manager.connectServer({
    name: 'everything',
    transport: 'stdio',
    command: process.execPath,
    args: [everything, 'stdio'],
    timeoutMs: 10_000, // no status change for this long ends the call (and cancels the task)
  });

  // An ambiguous topic makes the task ask which one is meant, halfway through.
  const progress: string[] = [];
  const report = await manager.executeTool(
    RESEARCH,
    { topic: 'python', ambiguous: true },
    { onProgress: (p) => progress.push(p.message ?? '') },
  );

  // Aborting the call sends tasks/cancel; the promise rejects with REQUEST_CANCELLED.
  const controller = new AbortController();
  const cancelled = await manager
    .executeTool(
      RESEARCH,
      { topic: 'rust' },
      { signal: controller.signal, onProgress: () => controller.abort() },
    )
    .catch((err: unknown) => (isInterlockError(err) ? err.code : 'unexpected'));

  return { title: report.split('\n')[0], progress, cancelled };
  // { title: '# Research Report: python (programming)',
  //   progress: ['working: Gathering sources...', ..., 'input_required: Found multiple interpretations ...',
  //              'working: Continuing with interpretation: "programming"...', ...],
  //   cancelled: 'REQUEST_CANCELLED' }
}
