import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
const c = new Client({ name: 'x', version: '1' }, { versionNegotiation: { mode: 'auto' } });
const t = new StdioClientTransport({ command: process.execPath, args: ['test/fixtures/servers/modern.mjs'] });
const orig = t.send.bind(t); t.send = async (m: any, o?: any) => { console.log('>>', JSON.stringify(m).slice(0, 300)); return orig(m, o); };
await c.connect(t);
console.log(c.getNegotiatedProtocolVersion(), c.getProtocolEra());
await c.close();
