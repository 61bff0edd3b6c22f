'use strict';
/*
 * Plugin runtime (issue 3): the cost of one gRPC round trip to a plugin process and the
 * memory of an idle plugin process.
 * The round trip comes from scripts/bench/transport.js (the supervisor and
 * the echo fixture plugin, no HTTP), run in its own process; its baseline is the same handler
 * called in-process in the same run. The RSS baseline is a bare `node` process started now.
 */
const path = require('node:path');

function transportBench(ctx, calls) {
  const { execFile } = require('node:child_process');
  const script = path.join(__dirname, '..', 'transport.js');
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [script, String(calls), '--json'], { maxBuffer: 1 << 20, timeout: 300_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`transport-bench failed: ${err.message}\n${stderr}`));
      resolve(JSON.parse(stdout.trim().split('\n').pop()));
    });
  });
}

async function bareNodeRssKb(ctx) {
  const { child } = await ctx.spawnUntil(process.execPath, ['-e', 'setInterval(() => {}, 1000); console.log("ready")'], {}, /ready/, 10_000);
  await new Promise((r) => setTimeout(r, 1000));
  const kb = ctx.memKb(child.pid).rss;
  child.kill('SIGTERM');
  return kb;
}

module.exports = {
  title: 'Plugin runtime: one gRPC call to a plugin, idle plugin memory',
  async run(ctx) {
    const calls = ctx.quick ? 4000 : 20000;
    const r = await transportBench(ctx, calls);
    const bareKb = await bareNodeRssKb(ctx);
    const us = (n) => (Number.isFinite(n) ? n.toFixed(1) : '–');
    const lines = [
      `${calls} calls per row through the supervisor's client to the echo fixture plugin (no HTTP, no token, no ACL), in a separate process; baseline: the same handler called in-process in that process. µs per call = mean time from call to answer at that number in flight.`,
      '',
      '| call | in flight | plugin µs/call | in-process µs/call | added by the hop µs | plugin calls/s | in-process calls/s | plugin as % of in-process |',
      '|---|---|---|---|---|---|---|---|',
    ];
    for (const p of r.runs.filter((x) => x.via === 'plugin')) {
      const base = r.runs.find((x) => x.via === 'in-process' && x.label === p.label && x.inFlight === p.inFlight);
      if (!base) {
        ctx.problem(`no in-process baseline for ${p.label} at ${p.inFlight} in flight`);
        continue;
      }
      lines.push(
        `| ${p.label} | ${p.inFlight} | ${us(p.usPerCall)} | ${us(base.usPerCall)} | ${us(p.usPerCall - base.usPerCall)} | ${ctx.fmt.int(p.callsPerSec)} | ${ctx.fmt.int(base.callsPerSec)} | ${ctx.fmt.pct(p.callsPerSec / base.callsPerSec)} |`,
      );
    }
    lines.push(
      '',
      '| memory | RSS | × bare node process |',
      '|---|---|---|',
      `| bare \`node -e\` process, idle (baseline, this run) | ${ctx.fmt.mb(bareKb)} | 1.0 |`,
      `| echo fixture plugin process, idle 1 s after start | ${ctx.fmt.mb(r.idleRssKb)} | ${(r.idleRssKb / bareKb).toFixed(1)} |`,
      `| echo fixture plugin process, after the calls | ${ctx.fmt.mb(r.afterRssKb)} | ${(r.afterRssKb / bareKb).toFixed(1)} |`,
    );
    return lines;
  },
};
