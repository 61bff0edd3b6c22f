'use strict';
/*
 * SSH engine (issue 13): certificates signed per second through the whole stack (HTTP,
 * ACL, gRPC to the ssh plugin, role and issuer from its cache, the certificate built and
 * signed in the plugin process) for an ed25519 CA and an RSA 4096 CA (rsa-sha2-256),
 * beside in-process signing loops in this process over a blob of a certificate's size with
 * the same key: sshpk's signer (the ceiling the issue names; its ed25519 is pure JavaScript)
 * and node:crypto's (what the plugin signs with). The ratios say how much of one core's
 * signing rate one plugin process delivers over HTTP.
 */
const crypto = require('node:crypto');
const path = require('node:path');

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
    return lines;
  },
};
