// Traces of an agent: pass a tracer (or register a global SDK) and every run becomes a span tree.
import { fileURLToPath } from 'node:url';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { Engine } from 'mcp-interlock/engine';
import { scriptedModel, useTool } from 'mcp-interlock/testing';

const notesServer = fileURLToPath(new URL('../../../examples/servers/notes-server.mjs', import.meta.url));

export async function main() {
  // In an app: the OpenTelemetry Node SDK with an OTLP exporter. Here: spans kept in memory.
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

  await using engine = new Engine({ tracer: provider.getTracer('my-app') });
  const agent = await engine.createAgent({
    name: 'reader',
    model: scriptedModel([useTool('mcp__notes__list_notes'), 'done']),
    capabilities: {
      version: 1,
      rules: [{ effect: 'allow', resource: 'mcp:notes:list_notes', actions: 'execute' }],
    },
    mcpServers: [{ name: 'notes', transport: 'stdio', command: process.execPath, args: [notesServer] }],
  });
  await agent.run('List my notes.');

  const spans = exporter.getFinishedSpans();
  await provider.shutdown();
  const tool = spans.find((s) => s.name === 'execute_tool mcp__notes__list_notes');
  return {
    spans: spans.map((s) => s.name),
    // ['tools/list', 'initialize', 'create_agent reader', 'chat scripted', 'tools/call list_notes',
    //  'execute_tool mcp__notes__list_notes', 'interlock.turn', 'chat scripted', 'interlock.turn', 'invoke_agent reader']
    decision: tool?.attributes['interlock.decision'], // 'allow'
  };
}
