'use strict';
/*
 * Idle memory (issue 20): a fresh dev server of its own (not the one the load phases warmed)
 * with every engine mounted (kv, transit, database, approle, ssh, rabbitmq, ldap), left idle,
 * then the PSS of the core and of each plugin process, the PSS of the core and every descendant
 * process summed (found by ppid, scripts/bench/proc.js) beside the 150 MB target (issue 31),
 * and a bare `node -e` process measured the same way in the same run. RSS is printed beside
 * PSS: every process maps the same node binary (about 34 MB of shared, clean pages), which a
 * sum of RSS counts once per process; PSS divides a shared page among its sharers, so its sum
 * is what the machine spends.
 * Two readings: 3 s after the last mount (start-up garbage still held), and once V8's memory
 * reducer has run (it collects and gives pages back 8 s after a process's start-up GC, or
 * 8 s later again when the process was not idle then: `--trace-gc` shows "Mark-Compact
 * (reduce)"); a server left idle sits at the second, which is the one set against the target.
 * Alone: npm run bench -- --only idle-memory
 */
const os = require('node:os');
const { spawn } = require('node:child_process');
const { memKb, treeMemKb } = require('../proc.js');
const { startDevServer } = require('../dev-server.js');

/** Idle PSS of the core and every descendant, settled (issue 31). */
const TARGET_MB = 150;
const IDLE_MS = 3000;
/** After IDLE_MS, how much longer until every process's memory reducer has run (two of its 8 s rounds). */
const SETTLE_MS = 17_000;
/** [mount path, sys endpoint, type]; kv comes mounted at secret/ in dev mode. */
const MOUNTS = [
  ['transit', 'mounts', 'transit'],
  ['database', 'mounts', 'database'],
  ['ssh', 'mounts', 'ssh'],
  ['rabbitmq', 'mounts', 'rabbitmq'],
  ['ldap', 'mounts', 'ldap'],
  ['approle', 'auth', 'approle'],
];
const ENGINES = ['kv', 'transit', 'database', 'approle', 'ssh', 'rabbitmq', 'ldap'];

function bareNode() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    child.once('error', reject);
    setTimeout(() => {
      const kb = memKb(child.pid);
      child.kill('SIGTERM');
      resolve(kb);
    }, IDLE_MS);
  });
}

async function measure(ctx) {
  const srv = await startDevServer(ctx);
  try {
    const must = async (method, p, body) => {
      const r = await ctx.request(srv.port, method, p, body);
      if (r.status < 200 || r.status > 299) throw new Error(`${method} ${p} -> ${r.status} ${r.text.slice(0, 300)}`);
      return r;
    };
    for (const [mountPath, kind, type] of MOUNTS) await must('POST', `/v1/sys/${kind}/${mountPath}`, { type });
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const corePid = srv.pid;
    const procs = [{ name: 'core', pid: corePid }];
    for (const e of ENGINES) procs.push({ name: `${e} plugin`, pid: ctx.findChildren(corePid, `plugins/${e}/dist/plugin.js`)[0] });
    const early = procs.map((p) => memKb(p.pid));
    const earlyTree = treeMemKb(corePid);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    return { rows: procs.map((p, i) => ({ ...p, ...memKb(p.pid), early: early[i] })), tree: treeMemKb(corePid), earlyTree };
  } finally {
    await srv.stop();
  }
}

module.exports = {
  title: 'Idle memory: core and every engine mounted',
  async run(ctx) {
    const load0 = os.loadavg()[0];
    const bare = await bareNode();
    const { rows, tree, earlyTree } = await measure(ctx);
    const missing = rows.filter((r) => !Number.isFinite(r.pss));
    if (missing.length) ctx.problem(`no process found for ${missing.map((r) => r.name).join(', ')}`);
    if (tree.processes !== rows.length) ctx.problem(`${tree.processes} processes under the core, ${rows.length} expected`);
    // The target is a size, not a ratio to a ceiling: its reference is the target itself.
    ctx.target({ name: `idle PSS, core + ${rows.length - 1} engines, settled / the ${TARGET_MB} MB target`, value: tree.pss / 1024, reference: TARGET_MB, unit: 'MB', goal: 1, atMost: true });
    const mb = (kb) => ctx.fmt.mb(kb);
    const out = [
      `A fresh dev server (no load phase), ${rows.length - 1} engines mounted, left idle: read ${IDLE_MS / 1000} s after the last mount, then again ${(IDLE_MS + SETTLE_MS) / 1000} s after it, once V8's memory reducer has run in every process (the reading set against the target). From /proc/PID/smaps_rollup: PSS (a shared page divided among the processes mapping it), RSS, private = USS (Private_Clean + Private_Dirty). The total sums the core and every process descended from it (${tree.processes}). Load average ${load0.toFixed(2)} at the start.`,
      '',
      `| process | pid | PSS at ${IDLE_MS / 1000} s | PSS, settled | RSS, settled | private (USS), settled |`,
      '|---|---|---|---|---|---|',
      `| bare \`node -e\` process, idle (baseline, this run; ${mb(bare.shared)} of its RSS shared) |  |  | ${mb(bare.pss)} | ${mb(bare.rss)} | ${mb(bare.uss)} |`,
    ];
    for (const r of rows) out.push(`| ${r.name} | ${r.pid ?? '–'} | ${mb(r.early.pss)} | ${mb(r.pss)} | ${mb(r.rss)} | ${mb(r.uss)} |`);
    out.push(`| **total, core + every descendant (${tree.processes} processes)** |  | ${mb(earlyTree.pss)} | **${mb(tree.pss)}** (target ≤ ${TARGET_MB} MB: ${((100 * tree.pss) / 1024 / TARGET_MB).toFixed(1)} % of it) | ${mb(tree.rss)} | ${mb(tree.uss)} |`);
    return out;
  },
};
