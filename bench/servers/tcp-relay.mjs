#!/usr/bin/env node
// The floor of any process on the path (issue 41 part 4): a TCP relay that parses nothing. Each connection it
// accepts is joined to a new connection to the upstream and bytes are piped both ways as they come (Nagle off on
// both sockets). What bench/gateway.ts measures through it is what one more process's wake-ups and socket copies
// cost on the machine, before any HTTP or MCP work; the bare hop (bare-hop.mjs) adds HTTP on top of it.
//
//   node tcp-relay.mjs <upstream URL>
//
// Prints exactly `LISTENING <port>` on stdout once it accepts connections (127.0.0.1, a free port); exits when
// stdin ends.
import { connect, createServer } from 'node:net';

const upstream = new URL(process.argv[2] ?? '');
const port = Number(upstream.port || 80);

const server = createServer({ noDelay: true }, (inbound) => {
  const outbound = connect({ host: upstream.hostname, port, noDelay: true });
  inbound.pipe(outbound).on('error', () => inbound.destroy());
  outbound.pipe(inbound).on('error', () => outbound.destroy());
  inbound.on('error', () => outbound.destroy());
  outbound.on('error', () => inbound.destroy());
  inbound.on('close', () => outbound.destroy());
  outbound.on('close', () => inbound.destroy());
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`LISTENING ${server.address().port}\n`));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
