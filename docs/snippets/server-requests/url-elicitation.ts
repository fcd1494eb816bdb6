// URL-mode elicitation: a server asks the user to open a page (to connect an account, to pay). Only hosts the
// policy allowlists reach your handler; unsafe URLs are refused before the policy; Interlock never fetches one.
import { createRequire } from 'node:module';
import { MCPClientManager, type UrlElicitationRequest } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

const everything = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

export async function main() {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:everything:*', 'execute');
  capabilities.grant('mcp:everything:elicitation', 'request', {
    id: 'known-sites',
    // The allowlist: URL-mode requests to these hosts only (`host` is the punycode form of an IDN host).
    when: { args: { mode: { equals: 'url' }, host: { oneOf: ['modelcontextprotocol.io'] } } },
  });

  const shown: UrlElicitationRequest[] = [];
  await using manager = new MCPClientManager({
    capabilities,
    onUrlElicitation: (request) => {
      // A real app shows request.url in full, highlights request.host, warns when request.punycode is true,
      // and opens the browser only after the user agrees.
      shown.push(request);
      return { action: 'accept' };
    },
  });
  await manager.connectServer({
    name: 'everything',
    transport: 'stdio',
    command: process.execPath,
    args: [everything, 'stdio'],
  });

  const ask = (url: string) =>
    manager.executeTool('mcp__everything__trigger-url-elicitation', { url }).catch((e: Error) => e.message);
  const allowed = await ask('https://modelcontextprotocol.io/specification');
  const otherHost = await ask('https://login.example.net/connect');
  const script = await ask('javascript:alert(1)');
  return {
    allowedOpened: allowed.includes('User completed the URL elicitation flow'), // true
    otherHostDeclined: otherHost.includes('declined'), // true: not on the allowlist
    scriptRefused: script.includes("the scheme 'javascript:' is refused"), // true: before any policy
    shown: shown.map(({ host, punycode, url }) => ({ host, punycode, url })),
    // [{ host: 'modelcontextprotocol.io', punycode: false, url: 'https://modelcontextprotocol.io/specification' }]
  };
}
