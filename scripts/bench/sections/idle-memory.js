'use strict';
/*
 * Idle memory (issue 20): a fresh dev server of its own (not the one the load phases warmed)
 * with every engine mounted (kv, transit, database, approle, ssh, rabbitmq, ldap), left idle,
 * then the RSS of the core and of each plugin process, their total beside the 400 MB target,
 * and a bare `node -e` process measured the same way in the same run. Private memory (USS) is
 * printed beside RSS: every process maps the same node binary (about 34 MB of shared, clean
 * pages), which a sum of RSS counts once per process; USS summed plus the bare process's shared
 * pages once is what the machine really spends.
 * Two readings: 3 s after the last mount (start-up garbage still held), and once V8's memory
 * reducer has run (it collects and gives pages back 8 s after a process's start-up GC, or
 * 8 s later again when the process was not idle then: `--trace-gc` shows "Mark-Compact
 * (reduce)"); a server left idle sits at the second, which is the one set against the target.
 * Alone: npm run bench -- --only idle-memory
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');

const TARGET_MB = 400;
const IDLE_MS = 3000;
/** After IDLE_MS, how much longer until every process's memory reducer has run (two of its 8 s rounds). */
const SETTLE_MS = 17_000;
const TOKEN = 'root';
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

/** Private (USS) and shared resident kB of a process (/proc/PID/smaps_rollup), NaN when unreadable. */
function smapsKb(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
    return { uss: kb('Private_Clean') + kb('Private_Dirty'), shared: kb('Shared_Clean') + kb('Shared_Dirty') };
  } catch {
    return { uss: NaN, shared: NaN };
  }
}

function bareNodeRss(ctx) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    child.once('error', reject);
    setTimeout(() => {
      const kb = { rss: ctx.rssKb(child.pid), ...smapsKb(child.pid) };
      child.kill('SIGTERM');
      resolve(kb);
    }, IDLE_MS);
  });
}

async function measure(ctx) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'strongroom-bench-idle-'));
  const port = await ctx.freePort();
  const main = path.join(ctx.root, 'core', 'dist', 'cli', 'main.js');
  const srv = await ctx.spawnUntil(
    process.execPath,
    [main, 'server', '-dev', `-dev-listen-address=127.0.0.1:${port}`, `-dev-root-token-id=${TOKEN}`, `-dev-data-dir=${dataDir}`, '-log-level=error'],
    { cwd: ctx.root },
    /Root Token:/,
    30_000,
  );
  try {
    const must = async (method, p, body) => {
      const r = await ctx.request(port, method, p, body);
      if (r.status < 200 || r.status > 299) throw new Error(`${method} ${p} -> ${r.status} ${r.text.slice(0, 300)}`);
      return r;
    };
    for (const [mountPath, kind, type] of MOUNTS) await must('POST', `/v1/sys/${kind}/${mountPath}`, { type });
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const corePid = srv.child.pid;
    const procs = [{ name: 'core', pid: corePid }];
    for (const e of ENGINES) procs.push({ name: `${e} plugin`, pid: ctx.findChildren(corePid, `plugins/${e}/dist/plugin.js`)[0] });
    const read = (pid) => (pid ? { rss: ctx.rssKb(pid), ...smapsKb(pid) } : { rss: NaN, uss: NaN, shared: NaN });
    const early = procs.map((p) => read(p.pid));
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    return procs.map((p, i) => ({ ...p, ...read(p.pid), early: early[i] }));
  } finally {
    srv.child.kill('SIGTERM');
    await new Promise((r) => (srv.child.exitCode !== null ? r() : srv.child.once('exit', r)));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

module.exports = {
  title: 'Idle memory: core and every engine mounted',
  async run(ctx) {
    const load0 = os.loadavg()[0];
    const bare = await bareNodeRss(ctx);
    const rows = await measure(ctx);
    const missing = rows.filter((r) => !Number.isFinite(r.rss));
    if (missing.length) ctx.problem(`no process found for ${missing.map((r) => r.name).join(', ')}`);
    const sum = (k, of = (r) => r) => rows.reduce((s, r) => s + (Number.isFinite(of(r)[k]) ? of(r)[k] : 0), 0);
    const rss = sum('rss');
    const uss = sum('uss');
    const early = (r) => r.early;
    const mb = (kb) => ctx.fmt.mb(kb);
    const out = [
      `A fresh dev server (no load phase), ${rows.length - 1} engines mounted, left idle: read ${IDLE_MS / 1000} s after the last mount, then again ${(IDLE_MS + SETTLE_MS) / 1000} s after it, once V8's memory reducer has run in every process (the reading set against the target). RSS: /proc/PID/status VmRSS; private = USS, Private_Clean + Private_Dirty of /proc/PID/smaps_rollup. Load average ${load0.toFixed(2)} at the start.`,
      '',
      `| process | pid | RSS at ${IDLE_MS / 1000} s | RSS, settled | RSS × bare node process | private (USS), settled |`,
      '|---|---|---|---|---|---|',
      `| bare \`node -e\` process, idle (baseline, this run; ${mb(bare.shared)} of its RSS shared) |  |  | ${mb(bare.rss)} | 1.0 | ${mb(bare.uss)} |`,
    ];
    for (const r of rows) out.push(`| ${r.name} | ${r.pid ?? '–'} | ${mb(r.early.rss)} | ${mb(r.rss)} | ${(r.rss / bare.rss).toFixed(1)} | ${mb(r.uss)} |`);
    out.push(`| **total, core + ${rows.length - 1} engines** |  | ${mb(sum('rss', early))} | **${mb(rss)}** (target ≤ ${TARGET_MB} MB: ${((100 * rss) / 1024 / TARGET_MB).toFixed(1)} % of it) | ${(rss / bare.rss).toFixed(1)} | ${mb(uss)} |`);
    out.push(`| **private total + the node binary's shared pages once** |  |  |  |  | **${mb(uss + bare.shared)}** (${((100 * (uss + bare.shared)) / 1024 / TARGET_MB).toFixed(1)} % of ${TARGET_MB} MB) |`);
    return out;
  },
};
