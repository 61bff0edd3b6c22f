'use strict';
/*
 * LDAP engine (issue 15): dynamic directory credentials issued per second at concurrency 8
 * through the whole stack (HTTP, ACL, the ldap plugin process, password generation, template
 * and LDIF rendering, an LDAP add on slapd, lease registration in the core), beside the
 * directory's own cost measured in the same run with ldapts straight to the same slapd at the
 * same concurrency: an add alone (what issuing a credential asks of the directory) and an
 * add+delete loop (a credential's whole life in the directory). Issue 31's fair reference is
 * what the service must do per credential at the least: the same add over a bound connection
 * plus one durable (sealed, sync) lease write to a LevelDB of its own, as the database section's.
 * Revocation of every issued credential (revoke-prefix, sync: one LDAP delete each) is timed too.
 *
 * slapd: a private instance of its own from scripts/services/services.js, dropped at the end.
 */
const { execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const path = require('node:path');
const { openDurable } = require('../durable.js');
const { timedLoop } = require('../timed.js');

const CONCURRENCY = 8;
const MOUNT = 'ldap-bench';

function slapdFor(ctx) {
  const script = path.join(ctx.root, 'scripts', 'services', 'services.js');
  const out = execFileSync(process.execPath, [script, 'dedicated', 'slapd'], { encoding: 'utf8', timeout: 600_000 });
  const { id, url, vars } = JSON.parse(out.trim().split('\n').pop());
  return { url, vars, release: () => execFileSync(process.execPath, [script, 'drop', id], { stdio: 'ignore', timeout: 60_000 }) };
}

/**
 * `op(client, name)` at the given concurrency for `ms`, each worker on its own bound connection;
 * with `durable`, each op is followed by one sealed sync LevelDB write, as the core records a lease.
 */
async function directLoop(ldapts, sd, op, concurrency, warmupMs, ms, durable = null) {
  const clients = [];
  for (let i = 0; i < concurrency; i++) {
    const c = new ldapts.Client({ url: sd.url });
    await c.bind(sd.vars.STRONGROOM_TEST_LDAP_MANAGER_DN, sd.vars.STRONGROOM_TEST_LDAP_MANAGER_PASSWORD);
    clients.push(c);
  }
  try {
    return await timedLoop({
      concurrency, warmupMs, measureMs: ms,
      op: async (w, i) => {
        await op(clients[w], `direct_${w}_${i}_${randomBytes(4).toString('hex')}`);
        if (durable) await durable.put('lease');
      },
    });
  } finally {
    for (const c of clients) await c.unbind().catch(() => undefined);
  }
}

module.exports = {
  title: 'LDAP engine: dynamic directory credentials',
  async run(ctx) {
    let ldapts;
    try {
      ldapts = require(require.resolve('ldapts', { paths: [ctx.root, path.join(ctx.root, 'plugins/ldap')] }));
    } catch {
      ctx.problem('the ldapts package is not installed; skipped');
      return ['(skipped: ldapts not installed)'];
    }
    const sd = slapdFor(ctx);
    const slapdPid = Number(sd.vars.STRONGROOM_TEST_LDAP_PID);
    const dyn = `ou=dynamic,${sd.vars.STRONGROOM_TEST_LDAP_BASE}`;
    const entry = (name) => [
      new ldapts.Attribute({ type: 'objectClass', values: ['inetOrgPerson'] }),
      new ldapts.Attribute({ type: 'cn', values: [name] }),
      new ldapts.Attribute({ type: 'sn', values: ['BENCH'] }),
      new ldapts.Attribute({ type: 'userPassword', values: [randomBytes(24).toString('base64url')] }),
    ];
    let addOnly;
    let addLease;
    let addDelete;
    let creds;
    // CPU µs per operation (warm-up included) of each process doing the work: where a credential's cost lies.
    let credsCpu = { plugin: NaN, slapd: NaN };
    let refCpu = { bench: NaN, slapd: NaN };
    let revoke = { n: 0, s: NaN };
    try {
      await ctx.must('POST', `/v1/sys/mounts/${MOUNT}`, { type: 'ldap' });
      await ctx.must('POST', `/v1/${MOUNT}/config`, {
        binddn: sd.vars.STRONGROOM_TEST_LDAP_MANAGER_DN,
        bindpass: sd.vars.STRONGROOM_TEST_LDAP_MANAGER_PASSWORD,
        url: sd.url,
      });
      await ctx.must('POST', `/v1/${MOUNT}/role/bench`, {
        creation_ldif: `dn: cn={{.Username}},${dyn}\nobjectClass: inetOrgPerson\ncn: {{.Username}}\nsn: {{.RoleName | uppercase}}\nuserPassword: {{.Password}}\n`,
        deletion_ldif: `dn: cn={{.Username}},${dyn}\nchangetype: delete\n`,
        default_ttl: '1h',
      });
      const check = await ctx.must('GET', `/v1/${MOUNT}/creds/bench`);
      if (typeof check.json?.data?.username !== 'string') throw new Error(`creds answered no username: ${check.text.slice(0, 200)}`);

      // The slapd is this section's alone and dropped at the end: the direct adds are not cleaned up.
      const add = (c, name) => c.add(`cn=${name},${dyn}`, entry(name));
      addOnly = await directLoop(ldapts, sd, add, CONCURRENCY, ctx.warmupMs, ctx.measureMs);
      const durable = await openDurable();
      const refSlapd0 = ctx.cpuUs(slapdPid);
      const benchCpu0 = process.cpuUsage();
      try {
        addLease = await directLoop(ldapts, sd, add, CONCURRENCY, ctx.warmupMs, ctx.measureMs, durable);
      } finally {
        await durable.close();
      }
      const benchCpu = process.cpuUsage(benchCpu0);
      refCpu = { bench: (benchCpu.user + benchCpu.system) / addLease.finished, slapd: (ctx.cpuUs(slapdPid) - refSlapd0) / addLease.finished };
      addDelete = await directLoop(ldapts, sd, async (c, name) => {
        await c.add(`cn=${name},${dyn}`, entry(name));
        await c.del(`cn=${name},${dyn}`);
      }, CONCURRENCY, ctx.warmupMs, ctx.measureMs);

      const pluginPid = ctx.findChildren(ctx.corePid, 'plugins/ldap/dist/plugin.js')[0];
      const pluginCpu0 = ctx.cpuUs(pluginPid);
      const slapdCpu0 = ctx.cpuUs(slapdPid);
      creds = await ctx.load({ url: ctx.url(`/v1/${MOUNT}/creds/bench`), method: 'GET', headers: ctx.auth, concurrency: CONCURRENCY }, ctx.corePid);
      credsCpu = { plugin: (ctx.cpuUs(pluginPid) - pluginCpu0) / creds.finished, slapd: (ctx.cpuUs(slapdPid) - slapdCpu0) / creds.finished };
      if (creds.non2xx || creds.errors) ctx.problem(`creds: ${creds.non2xx} non-2xx, ${creds.errors} errors; first: ${creds.firstNon2xx ?? creds.firstError}`);

      // Every credential issued here is deleted by revoking the mount's leases (the deletion LDIF).
      const issued = async () => {
        const c = new ldapts.Client({ url: sd.url });
        await c.bind(sd.vars.STRONGROOM_TEST_LDAP_MANAGER_DN, sd.vars.STRONGROOM_TEST_LDAP_MANAGER_PASSWORD);
        const r = await c.search(dyn, { scope: 'one', filter: '(cn=v_*)', attributes: ['1.1'] });
        await c.unbind();
        return r.searchEntries.length;
      };
      const n = await issued();
      const t0 = Date.now();
      await ctx.must('POST', `/v1/sys/leases/revoke-prefix/${MOUNT}/creds/bench`, { sync: true });
      const s = (Date.now() - t0) / 1000;
      const left = await issued();
      revoke = { n, s };
      if (left) ctx.problem(`${left} issued entries were still in the directory after revoke-prefix`);
      await ctx.must('DELETE', `/v1/sys/mounts/${MOUNT}`);
    } finally {
      sd.release();
    }

    ctx.target({ name: `LDAP dynamic creds / ldapts add + durable lease write, c=${CONCURRENCY}`, value: creds.okRps, reference: addLease.okRps, unit: 'per s', goal: 0.5 });
    const row = (name, r) =>
      `| ${name} | ${r.concurrency} | ${ctx.fmt.int(r.okRps)} | ${ctx.fmt.ms(r.p50Ms)} | ${ctx.fmt.ms(r.p99Ms)} | ${ctx.fmt.pct(r.okRps / addOnly.okRps)} | ${ctx.fmt.pct(r.okRps / addLease.okRps)} | ${ctx.fmt.pct(r.okRps / addDelete.okRps)} | ${r.non2xx} | ${r.errors} |`;
    return [
      '| scenario | c | per s | p50 ms | p99 ms | % of add | % of add + lease write | % of add+delete | non-2xx | errors |',
      '|---|---|---|---|---|---|---|---|---|---|',
      row('ceiling: ldapts add straight to slapd (same entry shape)', addOnly),
      row('ceiling: the same add, then one sealed sync LevelDB lease write', addLease),
      row('direct: ldapts add+delete loop (a credential\'s whole life in the directory)', addDelete),
      row(`GET ${MOUNT}/creds/bench (template + LDIF + add, lease)`, creds),
      '',
      `CPU per credential: core ${ctx.fmt.int(creds.cpuUsPerReq)} µs, ldap plugin ${ctx.fmt.int(credsCpu.plugin)} µs, slapd ${ctx.fmt.int(credsCpu.slapd)} µs; per add + lease write of the reference: bench process ${ctx.fmt.int(refCpu.bench)} µs, slapd ${ctx.fmt.int(refCpu.slapd)} µs.`,
      '',
      `Revocation: revoke-prefix (sync) of about ${ctx.fmt.int(revoke.n)} credentials took ${revoke.s.toFixed(2)} s (${ctx.fmt.int(revoke.n / revoke.s)} deletes/s, each a deletion LDIF run by the plugin).`,
    ];
  },
};
