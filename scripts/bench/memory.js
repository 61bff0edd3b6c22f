'use strict';
/*
 * Process memory for the bench, from /proc (Linux). PSS (proportional set size) is the figure
 * the bench sets against targets: a shared page is divided among the processes that map it, so
 * a sum of PSS over the core and its plugin processes is what the machine spends, where a sum
 * of RSS counts the node binary's shared pages once per process. RSS is printed beside it.
 */
const fs = require('node:fs');

/** RSS, PSS, private (USS) and shared resident kB of one process (/proc/PID/smaps_rollup); NaN when unreadable. */
function memKb(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
    return {
      rss: kb('Rss'),
      pss: kb('Pss'),
      uss: kb('Private_Clean') + kb('Private_Dirty'),
      shared: kb('Shared_Clean') + kb('Shared_Dirty'),
    };
  } catch {
    return { rss: NaN, pss: NaN, uss: NaN, shared: NaN };
  }
}

/** Every live descendant of `pid` (children, their children, ...), from the ppid field of /proc/N/stat. */
function descendants(pid) {
  const children = new Map();
  for (const ent of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(ent)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${ent}/stat`, 'utf8');
      // The command name may hold spaces and parentheses: the fields after it start past the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(ent));
    } catch { /* the process went away while we looked */ }
  }
  const found = [];
  const queue = [pid];
  while (queue.length) for (const c of children.get(queue.shift()) ?? []) found.push(c), queue.push(c);
  return found;
}

/** memKb summed over `pid` and all its descendants; `processes` counts those read. */
function treeMemKb(pid) {
  const total = { rss: 0, pss: 0, uss: 0, processes: 0 };
  for (const p of [pid, ...descendants(pid)]) {
    const m = memKb(p);
    if (!Number.isFinite(m.pss)) continue;
    total.rss += m.rss;
    total.pss += m.pss;
    total.uss += m.uss;
    total.processes += 1;
  }
  return total;
}

module.exports = { memKb, treeMemKb };
