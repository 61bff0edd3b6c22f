'use strict';
/*
 * HA on PostgreSQL (issues 17, 30): kv-v2 read and write on a three-node cluster's active node
 * (storage "postgresql", writes fenced on the HA lock) and through a standby (reads served
 * there, writes forwarded), beside the same requests on the run's dev server (storage "level")
 * and the raw node:http ceilings of this run; kv read and transit encrypt served by the two
 * standbys together beside the active node alone (the CPU each node and its plugins used, and
 * the share the standbys served without forwarding); the invalidation delay (a write committed
 * on the active node until a standby serves the new value, p50/p99 beside the 100 ms goal);
 * then failover: SIGKILL of the active node until a write sent to a standby is acknowledged and
 * until another node answers health 200, beside the lock TTL and the 6 s the issue allows.
 *
 * PostgreSQL: scripts/bench/postgres.js (a given URL or a private instance stopped at the end).
 * The nodes are killed at the end; their tables are dropped when the URL was given.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { postgresFor } = require('../postgres.js');

// core/src/ha/ha-manager.ts haTimingsFor: ha_lock_ttl 5 s by default; a standby tries the moment the holder's lease ends.
const LOCK_TTL_MS = 5_000;
const RETRY_MS = 0;
const LIMIT_MS = 6_000;
const NODES = 3;
/** Goal of issue 30 for the invalidation delay's p99. */
const INVALIDATION_GOAL_MS = 100;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** CPU microseconds a node and its child processes (its plugins) used so far. */
function cpuTreeUs(ctx, pid) {
  const one = (p) => {
    const us = ctx.cpuUs(p);
    return Number.isFinite(us) ? us : 0;
  };
  return [pid, ...ctx.findChildren(pid, 'plugins/')].reduce((sum, p) => sum + one(p), 0);
}

const percentile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

module.exports = {
  title: 'HA: PostgreSQL storage beside level, and failover',
  async run(ctx) {
    const db = postgresFor(ctx);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strongroom-bench-ha-'));
    const table = `bench_kv_${process.pid}`;
    const nodes = [];
    try {
      const main = path.join(ctx.root, 'core', 'dist', 'cli', 'main.js');
      for (let i = 0; i < NODES; i++) {
        const port = await ctx.freePort();
        const file = path.join(dir, `node${i}.hcl`);
        fs.writeFileSync(
          file,
          `storage "postgresql" {\n  connection_url = "${db.url}"\n  table = "${table}"\n  ha_table = "${table}_ha"\n  ha_enabled = true\n}\n` +
            `listener "tcp" {\n  address = "127.0.0.1:${port}"\n  tls_disable = true\n}\napi_addr = "http://127.0.0.1:${port}"\n`,
        );
        const child = spawn(process.execPath, [main, 'server', `-config=${file}`, '-log-level=error'], { stdio: 'ignore', env: { ...process.env, TMPDIR: dir } });
        nodes.push({ port, child });
      }
      const health = async (n) => (await ctx.request(n.port, 'GET', '/v1/sys/health').catch(() => ({ status: 0 }))).status;
      for (const n of nodes) while ((await health(n)) === 0) await sleep(50);
      const init = await ctx.request(nodes[0].port, 'PUT', '/v1/sys/init', { secret_shares: 1, secret_threshold: 1 });
      if (init.status !== 200) throw new Error(`init: ${init.status} ${init.text.slice(0, 200)}`);
      const key = init.json.keys_base64[0];
      const root = init.json.root_token;
      for (const n of nodes) await ctx.request(n.port, 'PUT', '/v1/sys/unseal', { key });
      const activeNode = async () => {
        for (;;) {
          const codes = await Promise.all(nodes.map((n) => (n.child.exitCode === null && n.child.signalCode === null ? health(n) : 0)));
          const i = codes.indexOf(200);
          if (i !== -1) return nodes[i];
          await sleep(20);
        }
      };
      const active = await activeNode();
      const standby = nodes.find((n) => n !== active);
      const standbys = nodes.filter((n) => n !== active);
      const auth = { 'X-Vault-Token': root };
      const call = async (port, method, p, body) => {
        const r = await new Promise((resolve, reject) => {
          const http = require('node:http');
          const data = body === undefined ? null : Buffer.from(JSON.stringify(body));
          const req = http.request({ host: '127.0.0.1', port, method, path: p, headers: { ...auth, ...(data ? { 'content-type': 'application/json', 'content-length': data.length } : {}) } }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode));
          });
          req.on('error', reject);
          req.end(data ?? undefined);
        });
        if (r >= 300) throw new Error(`${method} ${p}: ${r}`);
      };
      await call(active.port, 'POST', '/v1/sys/mounts/secret', { type: 'kv', options: { version: '2' } });
      const value = { data: { value: 'x'.repeat(32) } };
      await call(active.port, 'POST', '/v1/secret/data/bench-read', value);
      await ctx.must('POST', '/v1/secret/data/bench-read', value);
      const urlOf = (port, p) => `http://127.0.0.1:${port}${p}`;
      // Requests with the cluster's root token over kept-alive connections (the invalidation probe polls fast).
      const agent = new (require('node:http').Agent)({ keepAlive: true, maxSockets: 8 });
      const req = (port, method, p, reqBody) =>
        new Promise((resolve, reject) => {
          const data = reqBody === undefined ? null : Buffer.from(JSON.stringify(reqBody));
          const r = require('node:http').request({ host: '127.0.0.1', port, method, path: p, agent, headers: { ...auth, ...(data ? { 'content-type': 'application/json', 'content-length': data.length } : {}) } }, (res) => {
            const chunks = [];
            res.on('data', (c) => chunks.push(c));
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              let json = null;
              try {
                json = text ? JSON.parse(text) : null;
              } catch {
                json = null;
              }
              resolve({ status: res.statusCode, json, text });
            });
          });
          r.on('error', reject);
          r.end(data ?? undefined);
        });
      const body = JSON.stringify(value);
      await call(active.port, 'POST', '/v1/sys/mounts/transit', { type: 'transit' });
      await call(active.port, 'POST', '/v1/transit/keys/bench');
      const standbyCounts = async (n) => {
        const r = await req(n.port, 'GET', '/v1/sys/metrics?format=prometheus');
        const out = { served: 0, forwarded: 0 };
        for (const m of (r.text ?? '').matchAll(/^strongroom_ha_standby_requests_total\{[^}]*outcome="([a-z_]+)"[^}]*\} (\d+)/gm)) {
          if (m[1] === 'served') out.served += Number(m[2]);
          else out.forwarded += Number(m[2]);
        }
        return out;
      };
      // Each standby rebuilt its state after the mounts above: wait until both serve the transit key themselves.
      for (const n of standbys) {
        for (let i = 0; ; i++) {
          const before = (await standbyCounts(n)).served;
          const r = await req(n.port, 'GET', '/v1/transit/keys/bench');
          if (r.status === 200 && (await standbyCounts(n)).served > before) break;
          if (i > 600) throw new Error('a standby never served reads itself');
          await sleep(50);
        }
      }
      const encryptBody = JSON.stringify({ plaintext: Buffer.from('x'.repeat(64)).toString('base64') });

      const phases = [
        ['kv-v2 read, level (dev server)', ctx.ceilGet, () => ctx.load({ url: ctx.url('/v1/secret/data/bench-read'), headers: ctx.auth })],
        ['kv-v2 read, postgresql (active node)', ctx.ceilGet, () => ctx.load({ url: urlOf(active.port, '/v1/secret/data/bench-read'), headers: auth })],
        ['kv-v2 read, postgresql (on a standby, served there)', ctx.ceilGet, () => ctx.load({ url: urlOf(standby.port, '/v1/secret/data/bench-read'), headers: auth })],
        ['kv-v2 write, level (dev server)', ctx.ceilPost, () => ctx.load({ url: ctx.url('/v1/secret/data/bench-ha-{n}'), method: 'POST', headers: ctx.auth, body })],
        ['kv-v2 write, postgresql (active node, fenced)', ctx.ceilPost, () => ctx.load({ url: urlOf(active.port, '/v1/secret/data/bench-{n}'), method: 'POST', headers: auth, body })],
        ['kv-v2 write, postgresql (via a standby, forwarded)', ctx.ceilPost, () => ctx.load({ url: urlOf(standby.port, '/v1/secret/data/bench-s-{n}'), method: 'POST', headers: auth, body })],
      ];
      const rows = [];
      const results = {};
      for (const [name, ceiling, run] of phases) {
        const r = await run();
        results[name] = r;
        if (r.non2xx || r.errors) ctx.problem(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors; first: ${r.firstNon2xx ?? r.firstError}`);
        rows.push(`| ${name} | ${r.concurrency} | ${ctx.fmt.int(r.okRps)} | ${ctx.fmt.ms(r.p50Ms)} | ${ctx.fmt.ms(r.p99Ms)} | ${ctx.fmt.pct(r.okRps / ceiling.okRps)} | ${r.non2xx} | ${r.errors} |`);
      }
      const ratio = (a, b) => ctx.fmt.pct(results[a].okRps / results[b].okRps);

      // Read scaling: the active node alone, then the two standbys together (half the connections each).
      const scaleRows = [];
      const half = Math.max(1, Math.floor(ctx.concurrency / 2));
      for (const [what, method, p, reqBody] of [
        ['kv-v2 read', 'GET', '/v1/secret/data/bench-read', null],
        ['transit encrypt', 'POST', '/v1/transit/encrypt/bench', encryptBody],
      ]) {
        const opts = (port, concurrency) => ({ url: urlOf(port, p), method, headers: auth, ...(reqBody ? { body: reqBody } : {}), concurrency });
        const cpu0 = nodes.map((n) => cpuTreeUs(ctx, n.child.pid));
        const alone = await ctx.load(opts(active.port, ctx.concurrency));
        const cpu1 = nodes.map((n) => cpuTreeUs(ctx, n.child.pid));
        const counts0 = await Promise.all(standbys.map(standbyCounts));
        const both = await Promise.all(standbys.map((n) => ctx.load(opts(n.port, half))));
        const cpu2 = nodes.map((n) => cpuTreeUs(ctx, n.child.pid));
        const counts1 = await Promise.all(standbys.map(standbyCounts));
        const served = counts1.reduce((a, c, i) => a + c.served - counts0[i].served, 0);
        const forwarded = counts1.reduce((a, c, i) => a + c.forwarded - counts0[i].forwarded, 0);
        const okRps = both.reduce((a, r) => a + r.okRps, 0);
        for (const r of [alone, ...both]) if (r.non2xx || r.errors) ctx.problem(`${what} scaling: ${r.non2xx} non-2xx, ${r.errors} errors; first: ${r.firstNon2xx ?? r.firstError}`);
        const cpuText = (a, b) => nodes.map((n, i) => `${n === active ? 'active' : 'standby'} ${((b[i] - a[i]) / 1e6).toFixed(1)} s`).join(', ');
        scaleRows.push(`| ${what}, active node alone | ${alone.concurrency} | ${ctx.fmt.int(alone.okRps)} | ${ctx.fmt.ms(alone.p99Ms)} | 100% | ${cpuText(cpu0, cpu1)} | |`);
        scaleRows.push(
          `| ${what}, two standbys together | ${half} + ${half} | ${ctx.fmt.int(okRps)} | ${ctx.fmt.ms(Math.max(...both.map((r) => r.p99Ms)))} | ${ctx.fmt.pct(okRps / alone.okRps)} | ${cpuText(cpu1, cpu2)} | ${ctx.fmt.pct(served / Math.max(1, served + forwarded))} |`,
        );
      }

      // Invalidation delay: a write committed on the active node until a standby serves the new value (no index header).
      const delays = [];
      const rounds = ctx.quick ? 30 : 100;
      for (let i = 0; i < rounds; i++) {
        const target = standbys[i % standbys.length];
        const marker = `v${i}-${Date.now()}`;
        const w = await req(active.port, 'POST', '/v1/secret/data/bench-invalidate', { data: { marker } });
        if (w.status !== 200) throw new Error(`invalidation write: ${w.status}`);
        const committed = performance.now();
        for (let tries = 0; ; tries++) {
          const r = await req(target.port, 'GET', '/v1/secret/data/bench-invalidate');
          if (r.json?.data?.data?.marker === marker) break;
          if (tries > 5000) throw new Error('a standby never saw the write');
        }
        delays.push(performance.now() - committed);
      }
      delays.sort((a, b) => a - b);

      // Failover: kill the active node; time until a write sent to a standby is acknowledged, and to the first health 200.
      const killedAt = Date.now();
      active.child.kill('SIGKILL');
      let writeAckMs = 0;
      for (let i = 0; !writeAckMs; i++) {
        const r = await req(standby.port, 'POST', '/v1/secret/data/bench-failover', { data: { i } }).catch(() => ({ status: 0 }));
        if (r.status === 200) writeAckMs = Date.now() - killedAt;
        else await sleep(20);
        if (Date.now() - killedAt > 60_000) throw new Error('no write acknowledged within 60 s of the kill');
      }
      const next = await activeNode();
      const failoverMs = Date.now() - killedAt;
      if (next === active) throw new Error('the killed node still answers');
      const ok = await ctx.request(next.port, 'GET', '/v1/sys/leader');
      if (ok.json?.leader_address !== `http://127.0.0.1:${next.port}`) ctx.problem(`failover: sys/leader names ${ok.json?.leader_address}`);
      if (writeAckMs > LIMIT_MS) ctx.problem(`failover: a write to a standby was acknowledged ${writeAckMs} ms after the kill (limit ${LIMIT_MS})`);
      const p99 = percentile(delays, 0.99);
      if (p99 > INVALIDATION_GOAL_MS) ctx.problem(`invalidation delay p99 ${p99.toFixed(1)} ms (goal ${INVALIDATION_GOAL_MS} ms)`);

      agent.destroy();
      return [
        `Three nodes on one PostgreSQL (${table}); the dev server of this run on level. Ratios to the raw node:http ceiling of the same method.`,
        '',
        '| scenario | c | req/s | p50 ms | p99 ms | % of ceiling | non-2xx | errors |',
        '|---|---|---|---|---|---|---|---|',
        `| ceiling: raw node:http GET | ${ctx.ceilGet.concurrency} | ${ctx.fmt.int(ctx.ceilGet.okRps)} | ${ctx.fmt.ms(ctx.ceilGet.p50Ms)} | ${ctx.fmt.ms(ctx.ceilGet.p99Ms)} | 100% | | |`,
        `| ceiling: raw node:http POST | ${ctx.ceilPost.concurrency} | ${ctx.fmt.int(ctx.ceilPost.okRps)} | ${ctx.fmt.ms(ctx.ceilPost.p50Ms)} | ${ctx.fmt.ms(ctx.ceilPost.p99Ms)} | 100% | | |`,
        ...rows,
        '',
        `postgresql / level: read ${ratio('kv-v2 read, postgresql (active node)', 'kv-v2 read, level (dev server)')}, write ${ratio('kv-v2 write, postgresql (active node, fenced)', 'kv-v2 write, level (dev server)')}.`,
        '',
        `Reads served by the standbys (issue 30): the same load on the active node alone, then split over the two standbys; on this ${require('node:os').cpus().length}-core machine every node and the load generator share the cores, so the gain is bounded by them. CPU: what each node and its plugin processes used during the phase.`,
        '',
        '| scenario | c | req/s | p99 ms | % of the active node alone | CPU per node | served without forwarding |',
        '|---|---|---|---|---|---|---|',
        ...scaleRows,
        '',
        '| invalidation delay (commit on the active node -> a standby serves the new value) | p50 ms | p99 ms | goal (p99) | p99 % of goal |',
        '|---|---|---|---|---|',
        `| ${delays.length} writes, read back by polling a standby | ${ctx.fmt.ms(percentile(delays, 0.5))} | ${ctx.fmt.ms(p99)} | ${INVALIDATION_GOAL_MS} | ${ctx.fmt.pct(p99 / INVALIDATION_GOAL_MS)} |`,
        '',
        '| failover | ms | lock TTL (ha_lock_ttl) | % of TTL | issue limit | % of limit |',
        '|---|---|---|---|---|---|',
        `| SIGKILL active -> a write sent to a standby acknowledged | ${writeAckMs} | ${LOCK_TTL_MS + RETRY_MS} | ${ctx.fmt.pct(writeAckMs / (LOCK_TTL_MS + RETRY_MS))} | ${LIMIT_MS} | ${ctx.fmt.pct(writeAckMs / LIMIT_MS)} |`,
        `| SIGKILL active -> first health 200 from another node | ${failoverMs} | ${LOCK_TTL_MS + RETRY_MS} | ${ctx.fmt.pct(failoverMs / (LOCK_TTL_MS + RETRY_MS))} | ${LIMIT_MS} | ${ctx.fmt.pct(failoverMs / LIMIT_MS)} |`,
      ];
    } finally {
      await Promise.all(
        nodes.map((n) => {
          if (n.child.exitCode !== null || n.child.signalCode !== null) return undefined;
          const exited = new Promise((r) => n.child.once('exit', r));
          n.child.kill('SIGKILL');
          return exited;
        }),
      );
      if (process.env.STRONGROOM_BENCH_POSTGRES_URL || process.env.STRONGROOM_TEST_PG_URL) {
        try {
          const { Client } = require('pg');
          const c = new Client({ connectionString: db.url });
          await c.connect();
          await c.query(`DROP TABLE IF EXISTS "${table}", "${table}_ha", "${table}_ha_seq", "${table}_ha_log"`);
          await c.end();
        } catch {
          // Left for the operator: the bench never fails over cleanup.
        }
      }
      db.release();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};
