/**
 * Reads the CPU profile `node --cpu-prof` wrote for the gateway process of bench/gateway.ts and ranks self time
 * by function (and by package or file), the way bench/profile.ts does for a contender.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT_DIR } from './paths.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: a package under node_modules, a file of ours, Node itself, or native. */
function owner(url: string): string {
  if (url === '') return '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg !== null) return pkg[1]!;
  if (url.startsWith('node:')) return url;
  return url.replace(`file://${ROOT_DIR}/`, '');
}

/** The newest profile in `dir`: busy time (idle excluded) and the top `top` functions by self time. */
export function summarizeProfile(
  dir: string,
  top: number,
): { text: string; top: { name: string; selfMs: number; share: number }[] } {
  const file = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort()
    .at(-1);
  if (file === undefined) throw new Error(`no CPU profile in ${dir}`);
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const byFunction = new Map<string, number>();
  const byOwner = new Map<string, number>();
  let busy = 0;
  for (const node of profile.nodes) {
    const t = self.get(node.id) ?? 0;
    const f = node.callFrame;
    if (t === 0 || f.functionName === '(idle)') continue;
    busy += t;
    const name = `${f.functionName || '(anonymous)'} ${owner(f.url)}:${f.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + t);
    byOwner.set(owner(f.url), (byOwner.get(owner(f.url)) ?? 0) + t);
  }
  const rank = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, t]) => ({
        name,
        selfMs: Math.round(t / 1000),
        share: Math.round((1000 * t) / busy) / 10,
      }));
  const lines = (title: string, rows: ReturnType<typeof rank>) =>
    [
      title,
      ...rows.map((r) => `${`${r.share}%`.padStart(6)} ${`${r.selfMs} ms`.padStart(9)}  ${r.name}`),
    ].join('\n');
  const functions = rank(byFunction);
  const text = [
    `gateway CPU profile ${join(dir, file)}: ${Math.round(busy / 1000)} ms busy (idle excluded)`,
    lines('self time by package or file', rank(byOwner).slice(0, 12)),
    lines('self time by function', functions),
  ].join('\n');
  return { text, top: functions };
}
