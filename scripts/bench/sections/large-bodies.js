'use strict';
/*
 * Memory under large requests (issue 31): a fresh dev server of its own, 6 kv-v2 writes of a
 * 30 MiB JSON body each (one large string value, under the default 32 MiB max_request_size)
 * sent at once, the PSS of the core and of the kv engine read every 50 ms while they run, then
 * again 30 s and 60 s after the last reply. Targets: the core's peak above its idle figure at
 * most 3 × the body bytes in flight, and the core back within 2 × its idle figure 60 s after.
 * Peak PSS is sampled, so a peak shorter than a sample can be missed: the figure is a floor.
 * `--large-bodies-after S` waits S s instead of 60 after the writes (the section takes about
 * that long plus 15 s).
 * Alone: npm run bench -- --only large-bodies
 */
const crypto = require('node:crypto');
const http = require('node:http');
const { memKb } = require('../proc.js');
const { startDevServer } = require('../dev-server.js');

const WRITERS = 6;
const BODY_BYTES = 30 * 1024 * 1024;
const SAMPLE_MS = 50;
/** How long the fresh server sits idle (one small write done) before its idle figure is read. */
const IDLE_MS = 10_000;
const afterIdx = process.argv.indexOf('--large-bodies-after');
const AFTER_MS = afterIdx >= 0 ? Number(process.argv[afterIdx + 1]) * 1000 : 60_000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `{"data":{"value":"<base64>"}}`, exactly `bytes` long. */
function largeBody(bytes) {
  const head = '{"data":{"value":"';
  const tail = '"}}';
  const n = bytes - head.length - tail.length;
  const value = crypto.randomBytes(Math.ceil((n * 3) / 4)).toString('base64').slice(0, n);
  return Buffer.from(head + value + tail, 'utf8');
}

function put(port, token, p, body) {
  return new Promise((resolve, reject) => {
    const headers = { 'X-Vault-Token': token, 'content-type': 'application/json', 'content-length': body.length };
    const req = http.request({ host: '127.0.0.1', port, method: 'PUT', path: p, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

module.exports = {
  title: 'Memory under large requests: 6 parallel kv writes of a 30 MB body',
  async run(ctx) {
    const body = largeBody(BODY_BYTES);
    const srv = await startDevServer(ctx);
    try {
      const small = await put(srv.port, ctx.token, '/v1/secret/data/warm', Buffer.from('{"data":{"a":"b"}}'));
      if (small.status !== 200) throw new Error(`warm-up write -> ${small.status} ${small.text.slice(0, 200)}`);
      const kvPid = ctx.findChildren(srv.pid, 'plugins/kv/dist/plugin.js')[0];
      await sleep(IDLE_MS);
      const idle = { core: memKb(srv.pid), kv: memKb(kvPid) };

      const peak = { core: idle.core.pss, kv: idle.kv.pss };
      const sample = () => {
        peak.core = Math.max(peak.core, memKb(srv.pid).pss || 0);
        peak.kv = Math.max(peak.kv, memKb(kvPid).pss || 0);
      };
      const timer = setInterval(sample, SAMPLE_MS);
      const t0 = Date.now();
      let results;
      try {
        results = await Promise.all(Array.from({ length: WRITERS }, (_, i) => put(srv.port, ctx.token, `/v1/secret/data/large-${i}`, body)));
        // What the last replies leave behind is freed (or not) just after them: keep sampling a little.
        await sleep(1000);
      } finally {
        clearInterval(timer);
      }
      sample();
      const writeMs = Date.now() - t0;
      const failed = results.filter((r) => r.status !== 200);
      if (failed.length) ctx.problem(`${failed.length} of ${WRITERS} large writes failed: ${failed[0].status} ${failed[0].text.slice(0, 200)}`);

      const later = [];
      for (const at of [30_000, AFTER_MS].filter((ms, i, all) => ms <= AFTER_MS && all.indexOf(ms) === i)) {
        await sleep(t0 + writeMs + at - Date.now());
        later.push({ at, core: memKb(srv.pid), kv: memKb(kvPid) });
      }
      const last = later[later.length - 1];

      const inFlightKb = (WRITERS * body.length) / 1024;
      ctx.target({ name: `core peak PSS above idle, ${WRITERS} × 30 MB kv writes / 3 × the body bytes in flight`, value: (peak.core - idle.core.pss) / 1024, reference: (3 * inFlightKb) / 1024, unit: 'MB', goal: 1, atMost: true });
      ctx.target({ name: `core PSS ${last.at / 1000} s after the large writes / its idle PSS`, value: last.core.pss / 1024, reference: idle.core.pss / 1024, unit: 'MB', goal: 2, atMost: true });

      const mb = (kb) => ctx.fmt.mb(kb);
      const out = [
        `A fresh dev server; one small write, ${IDLE_MS / 1000} s idle (the idle figure), then ${WRITERS} kv-v2 writes of a ${mb(body.length / 1024)} JSON body each (one base64 string value) sent at once: ${mb(inFlightKb)} in flight. PSS of the core and of the kv engine read every ${SAMPLE_MS} ms from the first byte sent until 1 s after the last reply (${(writeMs / 1000).toFixed(1)} s), then ${later.map((l) => `${l.at / 1000} s`).join(' and ')} after it. ${WRITERS - failed.length} of ${WRITERS} writes answered 200.`,
        '',
        `| process | PSS idle | PSS peak | peak above idle | ${later.map((l) => `PSS ${l.at / 1000} s after`).join(' | ')} |`,
        `|---|---|---|---|${later.map(() => '---|').join('')}`,
        `| core | ${mb(idle.core.pss)} | ${mb(peak.core)} | ${mb(peak.core - idle.core.pss)} (${((peak.core - idle.core.pss) / inFlightKb).toFixed(2)} × in flight; target ≤ 3 ×) | ${later.map((l) => `${mb(l.core.pss)} (${(l.core.pss / idle.core.pss).toFixed(2)} × idle)`).join(' | ')} |`,
        `| kv engine | ${mb(idle.kv.pss)} | ${mb(peak.kv)} | ${mb(peak.kv - idle.kv.pss)} (${((peak.kv - idle.kv.pss) / inFlightKb).toFixed(2)} × in flight) | ${later.map((l) => `${mb(l.kv.pss)} (${(l.kv.pss / idle.kv.pss).toFixed(2)} × idle)`).join(' | ')} |`,
      ];
      return out;
    } finally {
      await srv.stop();
    }
  },
};
