// Process checks for leak tests. Linux only: they read /proc.
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

/** State letter and parent pid from `/proc/<pid>/stat`, or undefined when the process is gone. */
function readStat(pid: number): { state: string; ppid: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may itself contain spaces or ')'.
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: rest[0] ?? '', ppid: Number(rest[1]) };
}

/** True while `pid` runs. A zombie (exited, not yet reaped) counts as gone. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = readStat(pid);
  return stat === undefined ? existsInProc(pid) : stat.state !== 'Z';
}

function existsInProc(pid: number): boolean {
  try {
    readdirSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}

/** Pids of all live (non-zombie) descendants of `pid`: children, grandchildren, and so on. */
export function descendantPids(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const child = Number(name);
    const stat = readStat(child);
    if (stat === undefined || stat.state === 'Z') continue;
    const list = children.get(stat.ppid);
    if (list) list.push(child);
    else children.set(stat.ppid, [child]);
  }
  const found: number[] = [];
  const queue = [pid];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of children.get(next) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Waits until `pid` is gone. Resolves true when it exited, false if it still runs after `timeoutMs`. */
export async function waitForExit(pid: number, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await delay(20);
  }
  return true;
}

/** Number of open file descriptors of this process (entries of /proc/self/fd). */
export function openFdCount(): number {
  return readdirSync('/proc/self/fd').length;
}
