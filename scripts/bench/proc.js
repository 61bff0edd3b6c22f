'use strict';
/*
 * What the bench reads of processes, from /proc (Linux): memory, CPU time, children.
 * Memory: PSS (proportional set size) is the figure
 * the bench sets against targets: a shared page is divided among the processes that map it, so
 * a sum of PSS over the core and its plugin processes is what the machine spends, where a sum
 * of RSS counts the node binary's shared pages once per process. RSS is printed beside it.
 */
const fs = require('node:fs');

/** Clock ticks per second of /proc's times (USER_HZ: 100 on Linux). */
const CLK_TCK = 100;

/**
 * The fields of a /proc stat file after the command name (which may hold spaces and parentheses,
 * so they start past the last ')'): [0] state, [1] ppid, [11] utime, [12] stime.
 */
function statFields(file) {
  const stat = fs.readFileSync(file, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

const ticksUs = (f) => ((Number(f[11]) + Number(f[12])) * 1e6) / CLK_TCK;

/** CPU time (user + system) a process has used so far, in µs; NaN when it cannot be read. */
function cpuUs(pid) {
  try {
    return ticksUs(statFields(`/proc/${pid}/stat`));
  } catch {
    return NaN;
  }
}

/** CPU µs of each thread of `pid` so far: the main thread, and the others summed. */
function threadCpuUs(pid) {
  const out = { main: 0, other: 0 };
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      out[Number(tid) === pid ? 'main' : 'other'] += ticksUs(statFields(`/proc/${pid}/task/${tid}/stat`));
    } catch { /* the thread ended meanwhile */ }
  }
  return out;
}

/** Child processes of `ppid` whose command line contains `needle`. */
function findChildren(ppid, needle) {
  const found = [];
  for (const ent of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(ent)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${ent}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmd.includes(needle) && Number(statFields(`/proc/${ent}/stat`)[1]) === ppid) found.push(Number(ent));
    } catch { /* the process went away while we looked */ }
  }
  return found;
}

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
      const ppid = Number(statFields(`/proc/${ent}/stat`)[1]);
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

module.exports = { memKb, treeMemKb, cpuUs, threadCpuUs, findChildren };
