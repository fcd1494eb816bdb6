/**
 * The bar chart of the docs' performance page (`docs/assets/bench-ratios.svg`): per figure, each contender's
 * cost relative to the raw SDK, on a log scale around the 1× line. Plain SVG with no fonts or scripts, so it
 * renders anywhere, offline.
 */
import { CONTENDERS, type ContenderId } from './peers.js';
import { BASELINE, type BenchResults } from './results.js';

const COLORS: Record<ContenderId, string> = {
  sdk: '#757575',
  sdk2: '#9e9e9e',
  interlock: '#3949ab',
  langchain: '#2e7d32',
  mastra: '#ef6c00',
  'ai-sdk': '#6d4c41',
};

/** The figures the chart shows, when measured. */
// RSS per server is within page-size noise here; the JS heap shows the difference.
const CHARTED = /^(latency\..*\.p50|throughput\..*|connect\.many|reconnect|memory\.heap|import)$/;

const WIDTH = 960;
const LEFT = 300;
const RIGHT = 70;
const BAR = 11;
const GAP = 3;
const GROUP_GAP = 14;

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The chart as an SVG document. */
export function ratioChart(results: BenchResults): string {
  const contenders = results.contenders
    .filter((c) => c.status === 'ran' && c.id !== BASELINE)
    .map((c) => c.id);
  const groups = results.metrics
    .filter((m) => CHARTED.test(m.id))
    .map((m) => ({
      label: m.label,
      bars: contenders.map((id) => ({ id, ratio: m.values[id]?.ratio ?? null, error: m.values[id]?.error })),
    }))
    .filter((g) => g.bars.some((b) => b.ratio !== null));
  const ratios = groups.flatMap((g) => g.bars.map((b) => b.ratio).filter((r): r is number => r !== null));
  const lo = 2 ** Math.floor(Math.log2(Math.min(0.5, ...ratios)));
  const hi = 2 ** Math.ceil(Math.log2(Math.max(2, ...ratios)));
  const plot = WIDTH - LEFT - RIGHT;
  const x = (r: number) => LEFT + ((Math.log2(r) - Math.log2(lo)) / (Math.log2(hi) - Math.log2(lo))) * plot;

  const top = 92;
  const groupHeight = contenders.length * (BAR + GAP) - GAP;
  const height = top + groups.length * (groupHeight + GROUP_GAP) + 40;
  const out: string[] = [];
  const m = results.machine;
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<title>Cost of each MCP client relative to the raw SDK client</title>`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="16" y="24" font-size="16" font-weight="bold">Cost relative to the raw MCP SDK client (log scale; left of 1× is cheaper)</text>`,
    `<text x="16" y="44" fill="#555">${esc(`Medians over ${String(results.options.rounds)} interleaved rounds; ${m.cpus} × ${m.cpuModel}, Node ${m.node}, ${results.date.slice(0, 10)}. Throughput is shown as time per call.`)}</text>`,
  );
  // Legend.
  let lx = 16;
  for (const id of contenders) {
    const label = CONTENDERS[id].label;
    out.push(
      `<rect x="${lx}" y="58" width="12" height="12" fill="${COLORS[id]}"/>`,
      `<text x="${lx + 16}" y="68">${esc(label)}</text>`,
    );
    lx += 24 + label.length * 7;
  }
  // Grid lines at powers of two.
  const bottom = height - 30;
  for (let r = lo; r <= hi; r *= 2) {
    const gx = x(r).toFixed(1);
    const one = r === 1;
    out.push(
      `<line x1="${gx}" y1="${top - 6}" x2="${gx}" y2="${bottom}" stroke="${one ? '#212121' : '#e0e0e0'}" stroke-width="${one ? 1.5 : 1}"/>`,
      `<text x="${gx}" y="${bottom + 16}" text-anchor="middle" fill="#555">${r >= 1 ? r : `1/${1 / r}`}×</text>`,
    );
  }
  let y = top;
  for (const g of groups) {
    out.push(
      `<text x="${LEFT - 10}" y="${(y + groupHeight / 2 + 4).toFixed(1)}" text-anchor="end">${esc(g.label)}</text>`,
    );
    for (const b of g.bars) {
      if (b.ratio !== null) {
        const x0 = Math.min(x(1), x(b.ratio));
        const w = Math.max(1, Math.abs(x(b.ratio) - x(1)));
        const tx = b.ratio >= 1 ? x0 + w + 4 : x0 - 4;
        out.push(
          `<rect x="${x0.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${BAR}" fill="${COLORS[b.id]}"><title>${esc(`${CONTENDERS[b.id].label}: ${b.ratio}×`)}</title></rect>`,
          `<text x="${tx.toFixed(1)}" y="${y + BAR - 1}" font-size="10" text-anchor="${b.ratio >= 1 ? 'start' : 'end'}" fill="#333">${b.ratio.toFixed(2)}×</text>`,
        );
      } else {
        out.push(
          `<text x="${(x(1) + 4).toFixed(1)}" y="${y + BAR - 1}" font-size="10" fill="#999">n/a</text>`,
        );
      }
      y += BAR + GAP;
    }
    y += GROUP_GAP - GAP;
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
