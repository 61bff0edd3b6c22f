/** Waiting and process inspection for end-to-end tests (plugin processes, restarts). */
import { execFileSync } from 'node:child_process';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` every 100 ms until it gives something other than undefined/false (a throw counts as not yet). */
export async function waitFor<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await Promise.resolve().then(fn).catch(() => undefined);
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface ProcessRow {
  pid: number;
  ppid: number;
  args: string;
}

function processTable(): ProcessRow[] {
  return execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((c) => c.length > 2 && /^\d+$/.test(c[0] ?? ''))
    .map((c) => ({ pid: Number(c[0]), ppid: Number(c[1]), args: c.slice(2).join(' ') }));
}

/** Pids of the processes whose args mention every `needle` (and, if given, whose parent is `ppid`). */
export function pidsOf(needle: string | string[], ppid?: number): number[] {
  const needles = typeof needle === 'string' ? [needle] : needle;
  return processTable()
    .filter((p) => needles.every((n) => p.args.includes(n)) && (ppid === undefined || p.ppid === ppid))
    .map((p) => p.pid);
}

/** Pids of every process below `root` (any depth) whose args mention `needle`. */
export function descendantPids(root: number, needle: string): number[] {
  const rows = processTable();
  const tree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of rows) {
      if (tree.has(p.ppid) && !tree.has(p.pid)) {
        tree.add(p.pid);
        grew = true;
      }
    }
  }
  return rows.filter((p) => p.pid !== root && tree.has(p.pid) && p.args.includes(needle)).map((p) => p.pid);
}
