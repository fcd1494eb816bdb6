// A chained audit file, checked by a program: the same check as `interlock audit verify`.
import { readFile } from 'node:fs/promises';
import { JsonLinesAuditSink, parseAuditLines, verifyAuditChain } from 'mcp-interlock/security';

export async function main(path: string, secret: string) {
  const sink = new JsonLinesAuditSink(path, { chain: { key: { hmacSecret: secret } } });
  await sink.write({
    time: new Date().toISOString(),
    resource: 'mcp:fs:read_file',
    action: 'execute',
    effect: 'allow',
    allowed: true,
    reason: 'allowed by rule reads',
    argumentKeys: ['path'],
  });
  await sink.close(); // writes the final checkpoint

  const report = verifyAuditChain(parseAuditLines(await readFile(path, 'utf8')), {
    key: { hmacSecret: secret },
  });
  for (const f of report.findings) console.log(`${f.at}: ${f.kind} (seq ${f.seq}): ${f.message}`);
  return report; // report.ok: no record was deleted, edited, reordered or inserted, and the tail is sealed
}
