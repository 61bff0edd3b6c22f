'use strict';
/*
 * SCAN (issue 33): a kv v2 tree of 5,000 secrets in 200 folders three levels deep, listed
 * whole two ways through the real binary and the kv plugin: a SCAN paged 1,000 at a time,
 * against the client-side crawl a Vault client does today (LIST every directory, descending).
 * Storage round trips are the core's physical storage operations over each phase, read from
 * strongroom_storage_duration_seconds_count (op "list" for the crawl, "scan_range" for SCAN).
 */
const FOLDERS = Array.from({ length: 200 }, (_, i) => `t${i % 4}/g${Math.floor(i / 4) % 10}/f${String(i).padStart(3, '0')}`);
const KEYS = FOLDERS.flatMap((f) => Array.from({ length: 25 }, (_, j) => `${f}/s${String(j).padStart(2, '0')}`));
const MOUNT = 'scan-bench';

async function storageOps(ctx) {
  const r = await ctx.must('GET', '/v1/sys/metrics?format=prometheus');
  const counts = {};
  for (const m of r.text.matchAll(/^strongroom_storage_duration_seconds_count\{[^}]*op="([^"]+)"[^}]*\} (\d+)/gm)) counts[m[1]] = Number(m[2]);
  return counts;
}

async function measure(ctx, fn) {
  const before = await storageOps(ctx);
  const started = performance.now();
  const out = await fn();
  const ms = performance.now() - started;
  const after = await storageOps(ctx);
  const delta = {};
  for (const k of Object.keys(after)) delta[k] = after[k] - (before[k] ?? 0);
  return { ...out, ms, delta };
}

module.exports = {
  title: 'SCAN: recursive listing against the LIST crawl',
  async run(ctx) {
    await ctx.must('POST', `/v1/sys/mounts/${MOUNT}`, { type: 'kv', options: { version: '2' } });
    let next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < KEYS.length) await ctx.must('POST', `/v1/${MOUNT}/data/${KEYS[next++]}`, { data: { v: 'x' } });
    }));

    const scan = await measure(ctx, async () => {
      const keys = [];
      let requests = 0;
      for (;;) {
        const after = keys.length ? `&after=${encodeURIComponent(keys[keys.length - 1])}` : '';
        const r = await ctx.request(ctx.port, 'GET', `/v1/${MOUNT}/metadata/?scan=true&limit=1000${after}`);
        requests++;
        if (r.status === 404) break;
        if (r.status !== 200) throw new Error(`scan: ${r.status} ${r.text.slice(0, 200)}`);
        keys.push(...r.json.data.keys);
        if (r.json.data.keys.length < 1000) break;
      }
      return { keys: keys.length, requests };
    });

    const crawl = await measure(ctx, async () => {
      let keys = 0;
      let requests = 0;
      const dirs = [''];
      while (dirs.length) {
        const dir = dirs.pop();
        const r = await ctx.request(ctx.port, 'GET', `/v1/${MOUNT}/metadata/${dir}?list=true`);
        requests++;
        if (r.status !== 200) throw new Error(`list ${dir}: ${r.status}`);
        for (const k of r.json.data.keys) if (k.endsWith('/')) dirs.push(dir + k); else keys++;
      }
      return { keys, requests };
    });
    if (scan.keys !== KEYS.length || crawl.keys !== KEYS.length) ctx.problem(`scan saw ${scan.keys}, crawl ${crawl.keys} of ${KEYS.length} keys`);

    const trips = (m) => Object.values(m.delta).reduce((a, b) => a + b, 0);
    const row = (name, m) => `| ${name} | ${m.keys} | ${m.requests} | ${trips(m)} (${Object.entries(m.delta).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v}`).join(', ')}) | ${ctx.fmt.ms(m.ms)} |`;
    return [
      '| listing of 5,000 keys (200 folders, 3 levels) | keys | HTTP requests | storage round trips | ms |',
      '|---|---|---|---|---|',
      row('SCAN, pages of 1,000', scan),
      row('reference: LIST crawl (every directory)', crawl),
      '',
      `Storage round trips, SCAN / crawl: ${ctx.fmt.pct(trips(scan) / trips(crawl))}; time: ${ctx.fmt.pct(scan.ms / crawl.ms)}.`,
    ];
  },
};
