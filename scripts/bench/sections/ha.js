'use strict';
/*
 * HA on PostgreSQL (issue 17): kv-v2 read and write on a three-node cluster's active node
 * (storage "postgresql", writes fenced on the HA lock) and through a standby (forwarded),
 * beside the same requests on the run's dev server (storage "level") and the raw node:http
 * ceilings of this run; then failover time: SIGKILL of the active node to the first health
 * 200 from another node, beside the bound the lock's timings give (TTL + one acquire retry)
 * and the 20 s the issue allows.
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

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

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
      const body = JSON.stringify(value);

      const phases = [
        ['kv-v2 read, level (dev server)', ctx.ceilGet, () => ctx.load({ url: ctx.url('/v1/secret/data/bench-read'), headers: ctx.auth })],
        ['kv-v2 read, postgresql (active node)', ctx.ceilGet, () => ctx.load({ url: urlOf(active.port, '/v1/secret/data/bench-read'), headers: auth })],
        ['kv-v2 read, postgresql (via a standby, forwarded)', ctx.ceilGet, () => ctx.load({ url: urlOf(standby.port, '/v1/secret/data/bench-read'), headers: auth })],
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

      // Failover: kill the active node, time to the first 200 from another node.
      const killedAt = Date.now();
      active.child.kill('SIGKILL');
      const next = await activeNode();
      const failoverMs = Date.now() - killedAt;
      if (next === active) throw new Error('the killed node still answers');
      const ok = await ctx.request(next.port, 'GET', '/v1/sys/leader');
      if (ok.json?.leader_address !== `http://127.0.0.1:${next.port}`) ctx.problem(`failover: sys/leader names ${ok.json?.leader_address}`);
      if (failoverMs > LIMIT_MS) ctx.problem(`failover took ${failoverMs} ms (limit ${LIMIT_MS})`);

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
        '| failover | ms | bound from the lock (TTL + retry) | % of bound | issue limit | % of limit |',
        '|---|---|---|---|---|---|',
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
          await c.query(`DROP TABLE IF EXISTS "${table}", "${table}_ha"`);
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
