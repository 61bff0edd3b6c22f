import { createPublicKey } from 'node:crypto';
import sshpk from 'sshpk';
import { StrongroomError } from '@strongroom/sdk-plugin';
import { randomSerial, signCertificate, publicKeyHash, type CaSigner, type RsaAlgorithm } from './certificate.js';
import { caKeySpec, generateKey, importCaPair, issueKeySpec, parseSubjectKey, publicBlobOf, exportIssuedPrivateKey, type GeneratedKey } from './keys.js';

const signerOf = (g: GeneratedKey): CaSigner => ({ kind: g.kind, bits: g.bits, blob: publicBlobOf(g.publicKey).blob, key: g.key });

describe('certificates', () => {
  const cases: [string, number][] = [['ssh-ed25519', 0], ['ecdsa-sha2-nistp256', 0], ['ecdsa-sha2-nistp384', 0], ['ecdsa-sha2-nistp521', 0], ['rsa', 2048]];
  for (const [type, bits] of cases) {
    test(`a ${type} CA signs a certificate sshpk reads and verifies`, async () => {
      const ca = await generateKey(caKeySpec(type, bits));
      const user = await generateKey(issueKeySpec('ed25519', 0));
      const subject = parseSubjectKey(user.publicKey);
      // Many signatures: ECDSA signatures with a short r (leading zero byte) must encode too.
      for (let i = 0; i < (type.startsWith('ecdsa') ? 20 : 2); i++) {
        const line = signCertificate(
          {
            subject,
            serial: randomSerial(),
            certType: 'user',
            keyId: 'vault-root-abc',
            principals: ['root', 'alice'],
            validAfter: 1000,
            validBefore: 4_000_000_000,
            criticalOptions: { 'force-command': 'true' },
            extensions: { 'permit-pty': '' },
          },
          signerOf(ca),
        );
        expect(line.startsWith('ssh-ed25519-cert-v01@openssh.com ')).toBe(true);
        const cert = sshpk.parseCertificate(line, 'openssh');
        expect(cert.isSignedByKey(sshpk.parseKey(ca.publicKey, 'ssh'))).toBe(true);
        expect(cert.subjects.map((s) => s.uid)).toEqual(['root', 'alice']);
        const sig = (cert as unknown as { signatures: { openssh: { keyId: string; exts: { name: string; critical: boolean }[] } } }).signatures.openssh;
        expect(sig.keyId).toBe('vault-root-abc');
        expect(sig.exts.map((e) => [e.name, e.critical])).toEqual([['force-command', true], ['permit-pty', false]]);
      }
    });
  }

  test.each<RsaAlgorithm>(['rsa-sha2-256', 'rsa-sha2-512', 'ssh-rsa'])('an RSA CA signs with %s', async (alg) => {
    const ca = await generateKey(caKeySpec('ssh-rsa', 2048));
    const subject = parseSubjectKey((await generateKey(issueKeySpec('rsa', 2048))).publicKey);
    const line = signCertificate({ subject, serial: 7n, certType: 'host', keyId: 'k', principals: ['h.example.com'], validAfter: 0, validBefore: 10, criticalOptions: {}, extensions: {} }, signerOf(ca), alg);
    const buf = Buffer.from(line.split(' ')[1] as string, 'base64');
    // The signature is the last string of the certificate; its algorithm name opens it.
    const sigStart = buf.lastIndexOf(Buffer.concat([Buffer.alloc(3), Buffer.from([alg.length]), Buffer.from(alg)]));
    expect(sigStart).toBeGreaterThan(buf.length - 600);
    const cert0 = sshpk.parseCertificate(line, 'openssh');
    expect(cert0.isSignedByKey(sshpk.parseKey(ca.publicKey, 'ssh'))).toBe(true);
    const cert = sshpk.parseCertificate(line, 'openssh');
    expect(cert.subjects[0]?.hostname).toBe('h.example.com');
    expect(cert.serial.readBigUInt64BE()).toBe(7n);
  });

  test('a certificate with no principals is written (allow_empty_principals)', async () => {
    const ca = await generateKey(caKeySpec('ed25519', 0));
    const subject = parseSubjectKey((await generateKey(issueKeySpec('ec', 384))).publicKey);
    const line = signCertificate({ subject, serial: 1n, certType: 'user', keyId: 'k', principals: [], validAfter: 0, validBefore: 10, criticalOptions: {}, extensions: {} }, signerOf(ca));
    expect(line.startsWith('ecdsa-sha2-nistp384-cert-v01@openssh.com ')).toBe(true);
    const cert = sshpk.parseCertificate(line, 'openssh');
    expect(cert.isSignedByKey(sshpk.parseKey(ca.publicKey, 'ssh'))).toBe(true);
  });

  test('submitted CA pairs: OpenSSH and PEM private keys, mismatch refused', async () => {
    const a = await generateKey(caKeySpec('ed25519', 0));
    const b = await generateKey(caKeySpec('ec', 256));
    const openssh = exportIssuedPrivateKey(a);
    expect(openssh).toContain('BEGIN OPENSSH PRIVATE KEY');
    const imported = importCaPair(openssh, a.publicKey + ' comment');
    expect(imported.publicKey).toBe(a.publicKey);
    expect(createPublicKey(imported.key).export({ format: 'jwk' })).toEqual(createPublicKey(a.key).export({ format: 'jwk' }));
    expect(importCaPair(b.privatePkcs8, b.publicKey).kind).toBe('ecdsa');
    const mismatch = (() => { try { importCaPair(a.privatePkcs8, b.publicKey); } catch (e) { return e; } return null; })();
    expect(mismatch).toBeInstanceOf(StrongroomError);
    expect((mismatch as StrongroomError).message).toContain('public_key');
    expect(() => importCaPair('nonsense', a.publicKey)).toThrow(/private_key/);
  });

  test('subject keys: type, family and size; certificates refused', async () => {
    const rsa = parseSubjectKey((await generateKey(issueKeySpec('rsa', 3072))).publicKey + ' me@host');
    expect([rsa.sshType, rsa.family, rsa.bits]).toEqual(['ssh-rsa', 'rsa', 3072]);
    const ec = parseSubjectKey((await generateKey(issueKeySpec('ec', 521))).publicKey);
    expect([ec.sshType, ec.family, ec.bits]).toEqual(['ecdsa-sha2-nistp521', 'ecdsa', 521]);
    expect(publicKeyHash(ec)).toMatch(/^[0-9a-f]{64}$/);
    expect(() => parseSubjectKey('ssh-ed25519-cert-v01@openssh.com AAAA')).toThrow(/certificate/);
    expect(() => parseSubjectKey('not a key')).toThrow(/public_key/);
  });

  test('key specs refuse what Vault refuses, naming the field', () => {
    expect(caKeySpec('ssh-rsa', 0)).toEqual({ kind: 'rsa', bits: 4096 });
    expect(caKeySpec('ec', 0)).toEqual({ kind: 'ecdsa', bits: 256 });
    expect(() => caKeySpec('rsa', 1024)).toThrow(/key_bits/);
    expect(() => caKeySpec('ec', 300)).toThrow(/key_bits/);
    expect(() => caKeySpec('dsa', 0)).toThrow(/key_type/);
    expect(() => issueKeySpec('rsa', 1024)).toThrow(/key_bits/);
    expect(issueKeySpec('ed25519', 9)).toEqual({ kind: 'ed25519', bits: 256 });
  });
});

