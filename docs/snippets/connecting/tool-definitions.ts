// What a server says about its tools (title, annotations, outputSchema, icons) and what comes back:
// structuredContent checked against the outputSchema, resource links kept and named in the string.
import { createRequire } from 'node:module';
import { MCPClientManager } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

const everything = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

export async function main() {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:everything:get-structured-content', 'execute');
  capabilities.grant('mcp:everything:get-resource-links', 'execute');
  await using manager = new MCPClientManager({ capabilities });
  await manager.connectServer({
    name: 'everything',
    transport: 'stdio',
    command: process.execPath,
    args: [everything, 'stdio'],
  });

  const weather = manager.getTool('mcp__everything__get-structured-content');
  // Display data and hints from the server: untrusted, for people and for deny rules, never for allowing.
  const { title, annotations, outputSchema, icons } = weather?.definition ?? {};

  // A result of a tool with an outputSchema must carry matching structuredContent, or the call fails
  // with INVALID_TOOL_OUTPUT naming the paths that do not match.
  const result = await manager.callTool('mcp__everything__get-structured-content', { location: 'Chicago' });

  // resource_link blocks stay in `content` and are named in the string a model reads.
  const links = await manager.callTool('mcp__everything__get-resource-links', { count: 1 });

  return {
    title,
    readOnly: annotations?.readOnlyHint,
    outputRequired: outputSchema?.required,
    icons: icons ?? [],
    structured: result.structuredContent,
    linkTypes: links.content.map((c) => c.type),
    linkText: links.text.split('\n')[1],
  };
  // { title: 'Get Structured Content Tool', readOnly: true,
  //   outputRequired: ['temperature', 'conditions', 'humidity'], icons: [],
  //   structured: { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 },
  //   linkTypes: ['text', 'resource_link'],
  //   linkText: '[resource link: Blob Resource 1, demo://resource/dynamic/blob/1, text/plain] Resource 1: ...' }
}
