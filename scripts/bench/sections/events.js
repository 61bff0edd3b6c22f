'use strict';
/*
 * Change events (issue 32): what an event costs a write. kv-v2 writes per second at the bench's
 * concurrency with no subscriber and with 10 SSE subscribers to kv-v2/data-write (each reading
 * every event in this process, the load coming from load.js as in every phase), alternated
 * twice in one run, as a ratio. The subscribers' events are counted and the server's drop
 * counter read, so a run where subscribers fell behind says so.
 */
const http = require('node:http');

const SUBSCRIBERS = 10;

function subscribe(port, token) {
  return new Promise((resolve, reject) => {
    const state = { events: 0, dropped: 0, req: null };
    state.req = http.get({ host: '127.0.0.1', port, path: '/v1/sys/events/subscribe/kv-v2/data-write', headers: { 'X-Vault-Token': token }, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`subscribe: ${res.statusCode}`));
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        buf += c;
        const parts = buf.split('\n\n');
        buf = parts.pop();
        for (const p of parts) {
          if (p.startsWith('event: dropped')) state.dropped += JSON.parse(p.slice(p.indexOf('data: ') + 6)).count;
          else if (p.includes('\ndata: ') || p.startsWith('id: ')) state.events++;
        }
      });
      res.on('error', () => undefined);
      resolve(state);
    });
    state.req.on('error', reject);
  });
}

module.exports = {
  title: 'Change events: kv writes with 10 subscribers',
  async run(ctx) {
    const body = JSON.stringify({ data: { value: 'x'.repeat(32) } });
    const write = (tag) => ctx.load({ url: ctx.url(`/v1/secret/data/events-${tag}-{n}`), method: 'POST', headers: ctx.auth, body, concurrency: ctx.concurrency }, ctx.corePid);
    const rounds = [];
    let subs = [];
    for (let round = 0; round < 2; round++) {
      const without = await write(`a${round}`);
      subs = await Promise.all(Array.from({ length: SUBSCRIBERS }, () => subscribe(ctx.port, ctx.token)));
      const before = subs.map((s) => s.events);
      const withSubs = await write(`b${round}`);
      // Let the last events arrive before counting them.
      await new Promise((r) => setTimeout(r, 1000));
      const delivered = subs.map((s, i) => s.events - before[i]);
      const dropped = subs.reduce((n, s) => n + s.dropped, 0);
      for (const s of subs) s.req.destroy();
      rounds.push({ without, withSubs, delivered, dropped });
      for (const r of [without, withSubs]) if (r.non2xx || r.errors) ctx.problem(`kv write: ${r.non2xx} non-2xx, ${r.errors} errors; first: ${r.firstNon2xx ?? r.firstError}`);
    }
    const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const w0 = mean(rounds.map((r) => r.without.okRps));
    const w10 = mean(rounds.map((r) => r.withSubs.okRps));
    ctx.target({ name: `kv-v2 write with ${SUBSCRIBERS} event subscribers / without`, value: w10, reference: w0, unit: 'req/s', goal: 0.8 });
    const row = (name, r) => `| ${name} | ${r.concurrency} | ${ctx.fmt.int(r.okRps)} | ${ctx.fmt.ms(r.p50Ms)} | ${ctx.fmt.ms(r.p99Ms)} | ${ctx.fmt.int(r.cpuUsPerReq)} | ${r.non2xx} | ${r.errors} |`;
    const lines = ['| scenario | c | req/s | p50 ms | p99 ms | core CPU µs/req | non-2xx | errors |', '|---|---|---|---|---|---|---|---|'];
    rounds.forEach((r, i) => {
      lines.push(row(`round ${i + 1}: kv-v2 write, no subscriber`, r.without));
      lines.push(row(`round ${i + 1}: kv-v2 write, ${SUBSCRIBERS} SSE subscribers`, r.withSubs));
    });
    const cpu0 = mean(rounds.map((r) => r.without.cpuUsPerReq));
    const cpu10 = mean(rounds.map((r) => r.withSubs.cpuUsPerReq));
    lines.push(
      '',
      `Write rate with ${SUBSCRIBERS} subscribers / without: **${ctx.fmt.pct(w10 / w0)}** (means of ${rounds.length} alternated rounds). ` +
        `Core CPU per write: ${ctx.fmt.int(cpu0)} µs without, ${ctx.fmt.int(cpu10)} µs with ${SUBSCRIBERS} subscribers ` +
        `(about ${ctx.fmt.int((cpu10 - cpu0) / SUBSCRIBERS)} µs per event delivered).`,
      `Events each subscriber received over a phase with subscribers (warm-up included; measured writes: ${rounds.map((r) => ctx.fmt.int(r.withSubs.ok)).join(', ')}): ${rounds.map((r) => r.delivered.join('/')).join('; ')}; events reported dropped: ${rounds.map((r) => r.dropped).join(', ')}.`,
    );
    return lines;
  },
};
