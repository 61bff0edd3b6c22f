'use strict';
/*
 * AppRole (issue 5): logins per second at the bench's concurrency (32) through the whole stack
 * (HTTP, unauthenticated routing, gRPC to the approle plugin, SecretID HMAC lookup under its
 * lock, token creation and persistence in the core), beside a raw node:http POST ceiling
 * measured at the same concurrency in this run, and (issue 20) beside the durable-write
 * reference: sealed LevelDB puts, sync, 32 in flight. The SecretID has num_uses 0, so one body
 * is replayed.
 */
const path = require('node:path');

module.exports = {
  title: 'AppRole login',
  async run(ctx) {
    await ctx.must('POST', '/v1/sys/auth/approle-bench', { type: 'approle' });
    await ctx.must('POST', '/v1/auth/approle-bench/role/bench', { bind_secret_id: true, secret_id_num_uses: 0, token_policies: ['default'], token_ttl: '10m' });
    const roleId = (await ctx.must('GET', '/v1/auth/approle-bench/role/bench/role-id')).json.data.role_id;
    const secretId = (await ctx.must('POST', '/v1/auth/approle-bench/role/bench/secret-id', {})).json.data.secret_id;
    const body = JSON.stringify({ role_id: roleId, secret_id: secretId });

    // The replayed body must really log in, more than once.
    for (let i = 0; i < 2; i++) {
      const r = await ctx.request(ctx.port, 'POST', '/v1/auth/approle-bench/login', { role_id: roleId, secret_id: secretId });
      if (r.status !== 200 || typeof r.json?.auth?.client_token !== 'string') throw new Error(`approle login failed: ${r.status} ${r.text.slice(0, 300)}`);
    }

    const raw = await ctx.spawnUntil(process.execPath, [path.join(ctx.root, 'scripts', 'bench', 'raw-server.js')], {}, /listening (\d+)/, 10_000);
    const ceiling = await ctx.load({ url: `http://127.0.0.1:${raw.match[1]}/v1/auth/approle-bench/login`, method: 'POST', body, concurrency: ctx.concurrency });
    raw.child.kill('SIGTERM');

    const login = await ctx.load({ url: ctx.url('/v1/auth/approle-bench/login'), method: 'POST', body, concurrency: ctx.concurrency }, ctx.corePid);
    if (login.non2xx || login.errors) ctx.problem(`login: ${login.non2xx} non-2xx, ${login.errors} errors; first: ${login.firstNon2xx ?? login.firstError}`);

    ctx.target({ name: 'approle login / LevelDB sealed put, 32 in flight, sync', value: login.okRps, reference: ctx.durable.okRps, unit: 'req/s', goal: 0.25 });

    const row = (name, r) =>
      `| ${name} | ${r.concurrency} | ${ctx.fmt.int(r.okRps)} | ${ctx.fmt.ms(r.p50Ms)} | ${ctx.fmt.ms(r.p99Ms)} | ${ctx.fmt.pct(r.okRps / ceiling.okRps)} | ${r.non2xx} | ${r.errors} |`;
    return [
      '| scenario | c | req/s | p50 ms | p99 ms | % of ceiling | non-2xx | errors |',
      '|---|---|---|---|---|---|---|---|',
      row('ceiling: raw node:http POST, same body', ceiling),
      row('POST auth/approle-bench/login (bind_secret_id, num_uses 0)', login),
      '',
      `Core CPU per login over the phase: ${ctx.fmt.int(login.cpuUsPerReq)} µs.`,
    ];
  },
};
