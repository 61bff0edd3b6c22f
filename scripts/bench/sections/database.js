'use strict';
/*
 * Database engine (issue 7): dynamic PostgreSQL credentials issued per second at concurrency 8
 * through the whole stack (HTTP, ACL, gRPC to the database engine, password generation, the
 * built-in postgresql-database-plugin in the engine's process (since issue 31; a gRPC hop to a
 * process of its own before), CREATE ROLE in PostgreSQL, lease registration in the core),
 * beside the database's own cost: the same CREATE ROLE statement run directly with `pg` at the
 * same concurrency in the same run. The ratio says how much of the time is the service's.
 * Issue 20's reference adds what the core must do per credential: the same CREATE ROLE plus one
 * durable (sealed, sync) lease write to a LevelDB of its own. The CPU the server's processes
 * spend per credential is printed beside it: it moves less than req/s on a busy machine.
 *
 * PostgreSQL: scripts/bench/postgres.js (a given URL or a private instance stopped at the end).
 * Every role made here is dropped.
 */
const { randomBytes } = require('node:crypto');
const { openDurable } = require('../durable.js');
const { postgresFor } = require('../postgres.js');
const { timedLoop } = require('../timed.js');

const CONCURRENCY = 8;
const MOUNT = 'db-bench';
const CREATE = `CREATE ROLE "{{name}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'`;

/**
 * CREATE ROLE at the given concurrency, straight to PostgreSQL; with `durable`, each role is
 * followed by one sealed sync LevelDB write, as the core records a lease (issue 20's reference).
 */
async function directCreateRoles(pg, url, concurrency, warmupMs, measureMs, durable) {
  const pool = new pg.Pool({ connectionString: url, max: concurrency });
  const names = [];
  try {
    return await timedLoop({
      concurrency, warmupMs, measureMs,
      op: async (w, i) => {
        const name = `bench-direct-${w}-${i}-${randomBytes(4).toString('hex')}`;
        const pw = randomBytes(15).toString('base64url');
        const exp = new Date(Date.now() + 3600_000).toISOString();
        await pool.query(CREATE.replace('{{name}}', name).replace('{{password}}', pw).replace('{{expiration}}', exp));
        names.push(name);
        if (durable) await durable.put('lease');
      },
    });
  } finally {
    for (const n of names) await pool.query(`DROP ROLE IF EXISTS "${n}"`);
    await pool.end();
  }
}

module.exports = {
  title: 'Database engine: dynamic PostgreSQL credentials',
  async run(ctx) {
    let pg;
    try {
      pg = require('pg');
    } catch {
      ctx.problem('the pg package is not installed; skipped');
      return ['(skipped: pg not installed)'];
    }
    const db = postgresFor(ctx);
    const url = db.url;
    let direct;
    let directLease;
    let creds;
    let credsCpu;
    try {
      const u = new URL(url);
      await ctx.must('POST', `/v1/sys/mounts/${MOUNT}`, { type: 'database' });
      await ctx.must('POST', `/v1/${MOUNT}/config/pg`, {
        plugin_name: 'postgresql-database-plugin',
        connection_url: `postgresql://{{username}}:{{password}}@${u.host}${u.pathname}`,
        username: decodeURIComponent(u.username),
        password: decodeURIComponent(u.password),
        allowed_roles: '*',
        max_open_connections: CONCURRENCY,
      });
      await ctx.must('POST', `/v1/${MOUNT}/roles/bench`, { db_name: 'pg', creation_statements: [CREATE], default_ttl: '1h' });
      const check = await ctx.must('GET', `/v1/${MOUNT}/creds/bench`);
      if (typeof check.json?.data?.username !== 'string') throw new Error(`creds answered no username: ${check.text.slice(0, 200)}`);

      direct = await directCreateRoles(pg, url, CONCURRENCY, ctx.warmupMs, ctx.measureMs, null);
      const durable = await openDurable();
      try {
        directLease = await directCreateRoles(pg, url, CONCURRENCY, ctx.warmupMs, ctx.measureMs, durable);
      } finally {
        await durable.close();
      }
      // The engine, and the plugin's own process where one serves (a binary from before issue 31).
      const enginePid = ctx.findChildren(ctx.corePid, 'plugins/database/dist/plugin.js')[0];
      const pluginPid = ctx.findChildren(ctx.corePid, 'plugins/database-postgresql/dist/plugin.js')[0];
      const engineCpu0 = ctx.cpuUs(enginePid);
      const pluginCpu0 = pluginPid ? ctx.cpuUs(pluginPid) : 0;
      creds = await ctx.load({ url: ctx.url(`/v1/${MOUNT}/creds/bench`), method: 'GET', headers: ctx.auth, concurrency: CONCURRENCY }, ctx.corePid);
      credsCpu = {
        engine: (ctx.cpuUs(enginePid) - engineCpu0) / creds.finished,
        plugin: pluginPid ? (ctx.cpuUs(pluginPid) - pluginCpu0) / creds.finished : null,
      };
      if (creds.non2xx || creds.errors) ctx.problem(`creds: ${creds.non2xx} non-2xx, ${creds.errors} errors; first: ${creds.firstNon2xx ?? creds.firstError}`);

      // Drop every role issued here: revoking the mount's leases runs the plugin's DROP ROLE.
      await ctx.must('POST', `/v1/sys/leases/revoke-prefix/${MOUNT}/creds/bench`, { sync: true });
      await ctx.must('DELETE', `/v1/sys/mounts/${MOUNT}`);
    } finally {
      db.release();
    }

    ctx.target({ name: `PostgreSQL dynamic creds / CREATE ROLE + durable lease write, c=${CONCURRENCY}`, value: creds.okRps, reference: directLease.okRps, unit: 'per s', goal: 0.7 });
    const row = (name, r) =>
      `| ${name} | ${r.concurrency} | ${ctx.fmt.int(r.okRps)} | ${ctx.fmt.ms(r.p50Ms)} | ${ctx.fmt.ms(r.p99Ms)} | ${ctx.fmt.pct(r.okRps / direct.okRps)} | ${ctx.fmt.pct(r.okRps / directLease.okRps)} | ${r.non2xx} | ${r.errors} |`;
    return [
      '| scenario | c | per s | p50 ms | p99 ms | % of CREATE ROLE | % of CREATE ROLE + lease write | non-2xx | errors |',
      '|---|---|---|---|---|---|---|---|---|',
      row('ceiling: CREATE ROLE straight to PostgreSQL (pg, same statement)', direct),
      row('ceiling: the same CREATE ROLE, then one sealed sync LevelDB lease write', directLease),
      row(`GET ${MOUNT}/creds/bench (CREATE ROLE ... VALID UNTIL, lease)`, creds),
      '',
      `CPU per credential (warm-up included): core ${ctx.fmt.int(creds.cpuUsPerReq)} µs, database engine ${ctx.fmt.int(credsCpu.engine)} µs, ` +
        (credsCpu.plugin === null ? 'no postgresql plugin process (the built-in runs in the engine).' : `postgresql plugin process ${ctx.fmt.int(credsCpu.plugin)} µs.`),
    ];
  },
};
