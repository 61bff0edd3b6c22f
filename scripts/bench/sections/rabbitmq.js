'use strict';
/*
 * Message-broker engine (issue 14): RabbitMQ credentials issued per second at concurrency 8
 * through the whole stack (HTTP, ACL, gRPC to the rabbitmq engine, password generation, the
 * management API's PUT user and PUT permissions, lease registration in the core), beside the
 * broker's own cost: the same two management-API calls made directly (fetch, keep-alive) at the
 * same concurrency in the same run. The ratio says how much of the time is the service's.
 *
 * RabbitMQ: STRONGROOM_BENCH_RABBITMQ_URL (management API with an administrator inline,
 * http://admin:PW@127.0.0.1:15672), else a private instance of its own from
 * scripts/services/services.js, stopped at the end. Every user made here is deleted.
 */
const { execFile } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const path = require('node:path');
const { promisify } = require('node:util');
const { timedLoop } = require('../timed.js');

// Asynchronous on purpose: a broker's boot takes seconds, and a blocked event loop would leave the
// bench's keep-alive sockets to the dev server dead when the server times them out meanwhile.
const run = promisify(execFile);

const CONCURRENCY = 8;
const MOUNT = 'mq-bench';
const PERMISSIONS = { configure: '^bench\\.', write: '^bench\\.', read: '^bench\\.' };

const SERVICES = (ctx) => path.join(ctx.root, 'scripts', 'services', 'services.js');

/** A broker for this run: a given URL, else a private instance of its own that `release` stops. */
async function brokerFor(ctx) {
  const given = process.env.STRONGROOM_BENCH_RABBITMQ_URL;
  if (given) return { url: given, release: async () => {} };
  const { stdout } = await run(process.execPath, [SERVICES(ctx), 'dedicated', 'rabbitmq'], { encoding: 'utf8', timeout: 600_000 });
  const { id, url } = JSON.parse(stdout.trim().split('\n').pop());
  return { url, release: () => run(process.execPath, [SERVICES(ctx), 'drop', id], { timeout: 120_000 }) };
}

function managementApi(url) {
  const u = new URL(url);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
  const creds = { username: decodeURIComponent(u.username), password: decodeURIComponent(u.password) };
  u.username = '';
  u.password = '';
  const base = u.toString().replace(/\/+$/, '');
  const call = async (method, p, body) => {
    const res = await fetch(`${base}${p}`, {
      method,
      headers: { authorization: auth, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    await res.arrayBuffer();
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status}`);
  };
  return { base, creds, call };
}

/** The engine's two calls per credential, straight to the management API; latencies in ms. */
async function directCreateUsers(api, concurrency, warmupMs, ms) {
  const names = [];
  try {
    return await timedLoop({
      concurrency, warmupMs, measureMs: ms,
      op: async () => {
        const name = `bench-direct-${randomBytes(8).toString('hex')}`;
        await api.call('PUT', `/api/users/${name}`, { password: randomBytes(27).toString('base64url'), tags: 'management' });
        names.push(name);
        await api.call('PUT', `/api/permissions/%2F/${name}`, PERMISSIONS);
      },
    });
  } finally {
    for (let i = 0; i < names.length; i += 500) await api.call('POST', '/api/users/bulk-delete', { users: names.slice(i, i + 500) });
  }
}

module.exports = {
  title: 'Message-broker engine: dynamic RabbitMQ credentials',
  async run(ctx) {
    const broker = await brokerFor(ctx);
    let direct;
    let creds;
    try {
      const api = managementApi(broker.url);
      await ctx.must('POST', `/v1/sys/mounts/${MOUNT}`, { type: 'rabbitmq' });
      await ctx.must('POST', `/v1/${MOUNT}/config/connection`, { connection_uri: api.base, ...api.creds });
      await ctx.must('POST', `/v1/${MOUNT}/roles/bench`, { tags: 'management', vhosts: JSON.stringify({ '/': PERMISSIONS }) });
      await ctx.must('POST', `/v1/${MOUNT}/config/lease`, { ttl: '1h', max_ttl: '2h' });
      const check = await ctx.must('GET', `/v1/${MOUNT}/creds/bench`);
      if (typeof check.json?.data?.username !== 'string') throw new Error(`creds answered no username: ${check.text.slice(0, 200)}`);

      direct = await directCreateUsers(api, CONCURRENCY, ctx.warmupMs, ctx.measureMs);
      creds = await ctx.load({ url: ctx.url(`/v1/${MOUNT}/creds/bench`), method: 'GET', headers: ctx.auth, concurrency: CONCURRENCY });
      if (creds.non2xx || creds.errors) ctx.problem(`creds: ${creds.non2xx} non-2xx, ${creds.errors} errors; first: ${creds.firstNon2xx ?? creds.firstError}`);
      if (direct.errors) ctx.problem(`direct management API loop: ${direct.errors} errors`);

      // Delete every user issued here: revoking the mount's leases deletes them through the engine.
      await ctx.must('POST', `/v1/sys/leases/revoke-prefix/${MOUNT}/creds/bench`, { sync: true });
      await ctx.must('DELETE', `/v1/sys/mounts/${MOUNT}`);
    } finally {
      await broker.release();
    }

    const row = (name, r) =>
      `| ${name} | ${r.concurrency} | ${ctx.fmt.int(r.okRps)} | ${ctx.fmt.ms(r.p50Ms)} | ${ctx.fmt.ms(r.p99Ms)} | ${ctx.fmt.pct(r.okRps / direct.okRps)} | ${r.non2xx} | ${r.errors} |`;
    return [
      '| scenario | c | per s | p50 ms | p99 ms | % of ceiling | non-2xx | errors |',
      '|---|---|---|---|---|---|---|---|',
      row('ceiling: PUT user + PUT permissions straight to the management API (fetch, keep-alive)', direct),
      row(`GET ${MOUNT}/creds/bench (user + permissions through the engine, lease)`, creds),
    ];
  },
};
