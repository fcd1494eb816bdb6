#!/usr/bin/env node
// The floor of any gateway written in Node (issue 41 part 4): the leanest HTTP hop, with no MCP work at all.
// It takes a request on node:http, sends its method, headers and body to the upstream with undici's `request()`
// on a keep-alive pool, and answers with the upstream's status, headers and body (a JSON body whole, with its
// length; an event stream piped as it comes). What bench/gateway.ts measures through it is what one more Node
// process on the path costs before the gateway does anything of its own.
//
//   node bare-hop.mjs <upstream URL>
//
// Prints exactly `LISTENING <port>` on stdout once it accepts connections (127.0.0.1, a free port); exits when
// stdin ends.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';

// The project's undici (the one the gateway uses), not one a contender brought into bench/node_modules.
const { Agent, request } = createRequire(new URL('../../package.json', import.meta.url))('undici');

const upstream = new URL(process.argv[2] ?? '');
const pool = new Agent({ keepAliveTimeout: 60_000 });
/** Hop-by-hop headers (RFC 9110 section 7.6.1) and the ones each side sets for itself. */
const DROPPED = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

function forwarded(headers) {
  const out = {};
  for (const [name, value] of Object.entries(headers)) if (!DROPPED.has(name)) out[name] = value;
  return out;
}

const server = createServer(async (req, res) => {
  try {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const answer = await request(upstream, {
      method: req.method,
      headers: forwarded(req.headers),
      body: chunks.length === 0 ? null : Buffer.concat(chunks),
      dispatcher: pool,
    });
    const headers = forwarded(answer.headers);
    if (String(answer.headers['content-type'] ?? '').startsWith('text/event-stream')) {
      res.writeHead(answer.statusCode, headers);
      answer.body.pipe(res);
      return;
    }
    const body = Buffer.from(await answer.body.arrayBuffer());
    res.writeHead(answer.statusCode, { ...headers, 'content-length': body.length });
    res.end(body);
  } catch (err) {
    res.writeHead(502).end(String(err));
  }
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`LISTENING ${server.address().port}\n`));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
