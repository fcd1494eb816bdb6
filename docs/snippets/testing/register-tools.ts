// No server, no network: register tool schemas and work with the wrappers a model would see.
import { MCPClientManager } from 'mcp-interlock/interop';

// Written by hand here; a saved `tools/list` result ({ tools: [...] }) works as it is.
const githubTools = [
  {
    name: 'get_issue',
    description: 'Get an issue of a repository',
    inputSchema: {
      type: 'object',
      properties: { owner: { type: 'string' }, repo: { type: 'string' }, number: { type: 'integer' } },
      required: ['owner', 'repo', 'number'],
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'delete_repository',
    description: 'Delete a repository',
    inputSchema: {
      type: 'object',
      properties: { owner: { type: 'string' }, repo: { type: 'string' } },
      required: ['owner', 'repo'],
    },
    annotations: { destructiveHint: true },
  },
];

export async function main() {
  await using manager = new MCPClientManager();
  const tools = manager.registerTools('github', githubTools);
  return tools.map((tool) => ({
    name: tool.name, // 'mcp__github__get_issue': the same name the live server's tool will get
    offline: tool.offline, // true until the server connects for real
    required: tool.inputSchema.required, // the schema a model is shown
  }));
}
