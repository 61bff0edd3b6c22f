/**
 * A throwaway certificate authority for end-to-end TLS tests: a CA and a
 * server certificate it signs for 127.0.0.1 and localhost, as PEM, so a test
 * client can verify the server the way a real one does (trusting `ca`).
 */
import forge from 'node-forge';

export interface TestPki {
  caPem: string;
  certPem: string;
  keyPem: string;
}

function newCert(publicKey: forge.pki.PublicKey, serial: string, days: number): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = serial;
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + days * 86_400_000);
  return cert;
}

export function makeTestPki(): TestPki {
  // 2048-bit RSA takes well under a second with forge's pure-JS prime search.
  const caKeys = forge.pki.rsa.generateKeyPair(2048);
  const ca = newCert(caKeys.publicKey, '01', 2);
  const caName = [{ name: 'commonName', value: 'Strongroom test CA' }];
  ca.setSubject(caName);
  ca.setIssuer(caName);
  ca.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  ca.sign(caKeys.privateKey, forge.md.sha256.create());

  const keys = forge.pki.rsa.generateKeyPair(2048);
  const cert = newCert(keys.publicKey, '02', 1);
  cert.setSubject([{ name: 'commonName', value: 'localhost' }]);
  cert.setIssuer(caName);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] },
  ]);
  cert.sign(caKeys.privateKey, forge.md.sha256.create());

  return { caPem: forge.pki.certificateToPem(ca), certPem: forge.pki.certificateToPem(cert), keyPem: forge.pki.privateKeyToPem(keys.privateKey) };
}
