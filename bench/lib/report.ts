/** The table of a run, as Markdown (printed on stdout and pasted into docs/performance.md). */
import type { ContenderId } from './peers.js';
import type { BenchResults, Metric, MetricValue } from './results.js';

function formatNumber(value: number, unit: string): string {
  if (unit === '×') return value.toFixed(2);
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

function cell(v: MetricValue | undefined, unit: string): string {
  if (v === undefined) return '—';
  if (v.value === null) return v.error !== undefined && /reconnect/.test(v.error) ? 'no reconnect' : 'n/a';
  const ratio = v.ratio === null ? '' : ` (${v.ratio.toFixed(2)}×)`;
  return `${formatNumber(v.value, unit)}${ratio}`;
}

/** The Markdown table: one row per figure, one column per contender that ran; cells `value (ratio×)`. */
export function markdownTable(results: BenchResults): string {
  const ran = results.contenders.filter((c) => c.status === 'ran');
  const header = ['Figure', ...ran.map((c) => c.label)];
  const rows = results.metrics.map((m: Metric) => [
    `${m.label} (${m.unit}${m.better === 'higher' ? ', higher is better' : ''})`,
    ...ran.map((c) => cell(m.values[c.id as ContenderId], m.unit)),
  ]);
  if (results.capability !== null && 'p50Us' in results.capability) {
    const cap = results.capability;
    rows.push([
      `capability check p50 / p99, ${cap.rules} rules (µs)`,
      ...ran.map((c) => (c.id === 'interlock' ? `${cap.p50Us} / ${cap.p99Us}` : '—')),
    ]);
  }
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');
}

/** Everything printed at the end of a run. */
export function summary(results: BenchResults): string {
  const out: string[] = [];
  const m = results.machine;
  out.push(
    `Interlock benchmark, ${results.date}: ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, Node ${m.node} (${m.platform}); ` +
      `${String(results.options.rounds)} rounds, ${results.durationS} s.`,
  );
  out.push('Cells: median over rounds (ratio to the raw SDK in the same round; below 1 is cheaper).');
  out.push('');
  out.push(markdownTable(results));
  out.push('');
  for (const c of results.contenders) {
    out.push(
      `- ${c.label}: ${c.pkg}@${c.version ?? '?'}${c.status === 'skipped' ? ` — skipped: ${c.reason}` : ''}`,
    );
  }
  out.push('');
  for (const t of results.targets) {
    const mark = t.met === null ? 'not measured' : t.met ? 'met' : 'MISSED';
    out.push(`- [${mark}] ${t.text}: ${t.detail}`);
  }
  const notes = new Map<string, string>();
  for (const metric of results.metrics) {
    for (const [id, v] of Object.entries(metric.values)) {
      if (v?.error !== undefined && v.value === null) notes.set(`${id}: ${v.error}`, metric.label);
    }
  }
  if (notes.size > 0) {
    out.push('');
    for (const [note, figure] of notes) out.push(`- no value for ${figure}, ${note}`);
  }
  return out.join('\n');
}
