'use strict';
/*
 * SSH engine (issue 13): certificates signed per second through the whole stack (HTTP,
 * ACL, gRPC to the ssh plugin, role and issuer from its cache, the certificate built and
 * signed in the plugin process) for an ed25519 CA and an RSA 4096 CA (rsa-sha2-256),
 * beside in-process signing loops in this process over a blob of a certificate's size with
 * the same key: sshpk's signer (the ceiling the issue names; its ed25519 is pure JavaScript)
 * and node:crypto's (what the plugin signs with). The ratios say how much of one core's
 * signing rate one plugin process delivers over HTTP.
 *
 * Issue 31: SSH sign ed25519 beside transit sign with an ed25519 key (the same signature
 * without the certificate around it) through the same hop at the run's concurrency, so the
 * ratio is what the SSH engine's own work costs. The two alternate for a few rounds and the
 * ratio is of their mean rates, so a busy spell on a shared machine falls on both; the core's
 * and each plugin process's CPU µs per request (warm-up included) are shown per phase.
 */
const crypto = require('node:crypto');
const path = require('node:path');

/** Alternating SSH / transit rounds of the issue 31 comparison. */
const ROUNDS = 3;

const SECTIONS = [
  { name: 'ed25519', keyType: 'ed25519', keyBits: 0, concurrency: 16 },
  { name: 'RSA 4096', keyType: 'rsa', keyBits: 4096, concurrency: 8 },
];

/** Calls per second of `fn` in this process, for `ms` milliseconds. */
function rate(fn, ms) {
  let n = 0;
  const start = Date.now();
  const end = start + ms;
  while (Date.now() < end) {
    for (let i = 0; i < 5; i++) fn();
    n += 5;
  }
  return (n * 1000) / (Date.now() - start);
}

/** About the size of a user certificate's signed part with an ed25519 subject (plus the CA key, 550 B more for RSA 4096). */
const blobFor = (type) => crypto.randomBytes(type === 'rsa' ? 800 : 300);

/** Load of one phase with the CPU the core and `pluginPid` used per request served. */
async function loadWithCpu(ctx, cfg, pluginPid) {
  const before = ctx.cpuUs(pluginPid);
  const r = await ctx.load(cfg, ctx.corePid);
  r.pluginCpuUsPerReq = (ctx.cpuUs(pluginPid) - before) / r.finished;
  return r;
}

/** The one plugin process of `type` under the core (it serves every mount of that type). */
function pluginPid(ctx, type) {
  const [pid] = ctx.findChildren(ctx.corePid, `plugins/${type}/dist/plugin.js`);
  if (!pid) throw new Error(`no ${type} plugin process under the core`);
  return pid;
}

/**
 * Issue 31: POST ssh-bench/sign/ISSUER (ed25519 CA, ed25519 subject) and POST transit/sign/KEY
 * (ed25519 key, input about a certificate's signed part), alternating, at the run's concurrency.
 */
async function againstTransit(ctx, issuer, subject) {
  await ctx.must('POST', '/v1/sys/mounts/transit-ssh-bench', { type: 'transit' });
  await ctx.must('POST', '/v1/transit-ssh-bench/keys/ed', { type: 'ed25519' });
  const signBody = { input: crypto.randomBytes(300).toString('base64') };
  const check = await ctx.request(ctx.port, 'POST', '/v1/transit-ssh-bench/sign/ed', signBody);
  if (check.status !== 200 || !/^\w+:v1:/.test(String(check.json?.data?.signature ?? ''))) {
    throw new Error(`transit sign failed: ${check.status} ${check.text.slice(0, 300)}`);
  }
  const phases = [
    { name: 'ssh sign ed25519', pid: pluginPid(ctx, 'ssh'), cfg: { url: ctx.url(`/v1/ssh-bench/sign/${issuer}`), body: JSON.stringify({ public_key: subject, valid_principals: 'root' }) }, runs: [] },
    { name: 'transit sign ed25519', pid: pluginPid(ctx, 'transit'), cfg: { url: ctx.url('/v1/transit-ssh-bench/sign/ed'), body: JSON.stringify(signBody) }, runs: [] },
  ];
  const lines = [
    '',
    `SSH sign against transit sign, both ed25519, c=${ctx.concurrency}, alternating (issue 31):`,
    '',
    '| round | phase | req/s | p50 ms | p99 ms | core CPU µs/req | plugin CPU µs/req | non-2xx | errors |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (let round = 1; round <= (ctx.quick ? 1 : ROUNDS); round++) {
    for (const ph of phases) {
      const r = await loadWithCpu(ctx, { ...ph.cfg, method: 'POST', headers: ctx.auth }, ph.pid);
      if (r.non2xx || r.errors) ctx.problem(`${ph.name}: ${r.non2xx} non-2xx, ${r.errors} errors; first: ${r.firstNon2xx ?? r.firstError}`);
      ph.runs.push(r);
      lines.push(`| ${round} | ${ph.name} | ${ctx.fmt.int(r.okRps)} | ${ctx.fmt.ms(r.p50Ms)} | ${ctx.fmt.ms(r.p99Ms)} | ${ctx.fmt.int(r.cpuUsPerReq)} | ${ctx.fmt.int(r.pluginCpuUsPerReq)} | ${r.non2xx} | ${r.errors} |`);
    }
  }
  const mean = (runs) => runs.reduce((a, r) => a + r.okRps, 0) / runs.length;
  const [ssh, transit] = phases.map((ph) => mean(ph.runs));
  ctx.target({ name: `SSH sign ed25519 / transit sign ed25519, c=${ctx.concurrency}, mean of alternating rounds`, value: ssh, reference: transit, unit: 'req/s', goal: 0.7 });
  return lines;
}

/** sshpk's own signer (what an engine built on sshpk alone would do). */
function sshpkLoop(sshpk, privateKeyPem, ms) {
  const key = sshpk.parsePrivateKey(privateKeyPem, 'pem');
  const blob = blobFor(key.type);
  const hash = key.type === 'rsa' ? 'sha256' : undefined;
  return rate(() => {
    const s = key.createSign(hash);
    s.update(blob);
    s.sign();
  }, ms);
}

/** node:crypto's signer, which the plugin uses. */
function nodeLoop(privateKeyPem, type, ms) {
  const key = crypto.createPrivateKey(privateKeyPem);
  const blob = blobFor(type);
  const hash = type === 'rsa' ? 'sha256' : null;
  return rate(() => crypto.sign(hash, blob, key), ms);
}

module.exports = {
  title: 'SSH certificate signing',
  async run(ctx) {
    const sshpk = require(require.resolve('sshpk', { paths: [path.join(ctx.root, 'plugins', 'ssh')] }));
    const { generateKey, caKeySpec, issueKeySpec } = require(path.join(ctx.root, 'plugins', 'ssh', 'dist', 'crypto', 'keys.js'));
    await ctx.must('POST', '/v1/sys/mounts/ssh-bench', { type: 'ssh' });
    const subject = (await generateKey(issueKeySpec('ed25519', 0))).publicKey;
    const lines = [
      '| CA key | c | HTTP sign/s | p50 ms | p99 ms | in-process sshpk signatures/s | HTTP ÷ sshpk | in-process node:crypto signatures/s | HTTP ÷ node:crypto | HTTP ÷ raw POST ceiling | non-2xx | errors |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ];
    for (const s of SECTIONS) {
      // The CA is submitted, so this process knows its private key for the sshpk loop.
      const ca = await generateKey(caKeySpec(s.keyType, s.keyBits));
      const issuer = `bench-${s.keyType}`;
      await ctx.must('POST', `/v1/ssh-bench/issuers/import/${issuer}`, { generate_signing_key: false, private_key: ca.privatePkcs8, public_key: ca.publicKey });
      await ctx.must('POST', `/v1/ssh-bench/roles/${issuer}`, { key_type: 'ca', allow_user_certificates: true, allowed_users: '*', ttl: '5m', issuer_ref: issuer });
      const body = JSON.stringify({ public_key: subject, valid_principals: 'root' });
      const check = await ctx.request(ctx.port, 'POST', `/v1/ssh-bench/sign/${issuer}`, { public_key: subject, valid_principals: 'root' });
      if (check.status !== 200 || !String(check.json?.data?.signed_key ?? '').includes('-cert-v01@openssh.com ')) {
        throw new Error(`ssh sign failed: ${check.status} ${check.text.slice(0, 300)}`);
      }
      const loop = sshpkLoop(sshpk, ca.privatePkcs8, ctx.quick ? 1000 : ctx.measureMs);
      const native = nodeLoop(ca.privatePkcs8, s.keyType, ctx.quick ? 1000 : ctx.measureMs);
      const r = await ctx.load({ url: ctx.url(`/v1/ssh-bench/sign/${issuer}`), method: 'POST', headers: ctx.auth, body, concurrency: s.concurrency });
      if (r.non2xx || r.errors) ctx.problem(`sign ${s.name}: ${r.non2xx} non-2xx, ${r.errors} errors; first: ${r.firstNon2xx ?? r.firstError}`);
      lines.push(`| ${s.name} | ${r.concurrency} | ${ctx.fmt.int(r.okRps)} | ${ctx.fmt.ms(r.p50Ms)} | ${ctx.fmt.ms(r.p99Ms)} | ${ctx.fmt.int(loop)} | ${ctx.fmt.pct(r.okRps / loop)} | ${ctx.fmt.int(native)} | ${ctx.fmt.pct(r.okRps / native)} | ${ctx.fmt.pct(r.okRps / ctx.ceilPost.okRps)} | ${r.non2xx} | ${r.errors} |`);
    }
    lines.push(...(await againstTransit(ctx, 'bench-ed25519', subject)));
    return lines;
  },
};
