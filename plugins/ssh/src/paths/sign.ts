/**
 * sign/:name and issue/:name: certificates from a CA role. Signing runs here,
 * in the plugin process (an RSA 4096 signature is milliseconds of CPU), never
 * in the core. Nothing is stored: the certificate is only returned.
 */
import { badRequest, definePath, f, type HandlerRequest, type LogicalResponse, type PathDef } from '@strongroom/sdk-plugin';
import { randomSerial, signCertificate } from '../crypto/certificate.js';
import { exportIssuedPrivateKey, generateKey, issueKeySpec, parseSubjectKey, type SubjectKey } from '../crypto/keys.js';
import { resolveIssuer } from '../issuers.js';
import type { SshRole } from '../store.js';
import { planCertificate, signatureAlgorithm, type SignRequest } from '../sign-policy.js';
import type { SshDeps } from './deps.js';

const certificateFields = {
  name: f.string().describe('Name of the CA role'),
  ttl: f.duration().describe('Certificate TTL; not above the role\'s max_ttl').optional(),
  valid_principals: f.commaList().describe('Principals (users, or host names for host certificates)').optional(),
  cert_type: f.string().describe('user (default) or host').default('user'),
  key_id: f.string().describe('Key ID (only when the role allows user key IDs)').default(''),
  critical_options: f.map().describe('Critical options').default({}),
  extensions: f.map().describe('Extensions').default({}),
};

type CertificateData = {
  name: string;
  ttl?: number | undefined;
  valid_principals?: string[] | undefined;
  cert_type: string;
  key_id: string;
  critical_options: Record<string, unknown>;
  extensions: Record<string, unknown>;
};

async function caRole(deps: SshDeps, name: string): Promise<Readonly<SshRole>> {
  const role = await deps.store.roles.view(name);
  if (!role) throw badRequest(`unknown role: ${name}`);
  if (role.key_type !== 'ca') throw badRequest(`role "${name}" is not a CA role (key_type ${role.key_type})`);
  return role;
}

/** Plans, checks and signs; the data common to sign and issue. */
async function certify(deps: SshDeps, req: HandlerRequest<CertificateData>, role: Readonly<SshRole>, subject: SubjectKey): Promise<LogicalResponse> {
  const d = req.data;
  const [mountDefaultTtl, mountMaxTtl] = await Promise.all([
    role.ttl || (d.ttl ?? 0) > 0 ? 0 : deps.system.defaultLeaseTtl(),
    role.max_ttl ? 0 : deps.system.maxLeaseTtl(),
  ]);
  const signReq: SignRequest = { cert_type: d.cert_type, key_id: d.key_id, critical_options: d.critical_options, extensions: d.extensions };
  if (d.valid_principals !== undefined) signReq.valid_principals = d.valid_principals;
  if (d.ttl !== undefined) signReq.ttl = d.ttl;
  const plan = planCertificate(role, signReq, subject, {
    roleName: d.name,
    displayName: req.client.displayName,
    // Never the token's own meta: whoever creates a token chooses that (issue 26, finding 1).
    identity: { entityId: req.client.entityId, ...(req.client.alias ? { alias: req.client.alias } : {}) },
    mountDefaultTtl,
    mountMaxTtl,
  });
  const issuer = await resolveIssuer(deps.store, role.issuer_ref);
  const algorithm = signatureAlgorithm(role, issuer.kind);
  const now = Math.floor(Date.now() / 1000);
  const serial = randomSerial();
  const signedKey = signCertificate(
    {
      subject,
      serial,
      certType: plan.certType,
      keyId: plan.keyId,
      principals: plan.principals,
      validAfter: now - role.not_before_duration,
      validBefore: now + plan.ttl,
      criticalOptions: plan.criticalOptions,
      extensions: plan.extensions,
    },
    deps.store.signer(issuer),
    algorithm,
  );
  return { data: { serial_number: serial.toString(16), signed_key: signedKey, issuer_id: issuer.id } };
}

export function signPaths(deps: SshDeps): PathDef[] {
  const sign = definePath({
    pattern: 'sign/:name',
    fields: { ...certificateFields, public_key: f.string().describe('The SSH public key to sign (OpenSSH line)').optional() },
    synopsis: 'Sign an SSH public key with a CA role.',
    // Create and update are told apart for the ACL (spec: "create and update are distinguished ... on SSH sign").
    existenceCheck: async (req) => (await deps.store.roles.view(req.data.name)) !== null,
    operations: {
      update: {
        summary: 'Sign a public key: a user or host certificate.',
        handler: async (req) => {
          const role = await caRole(deps, req.data.name);
          if (!req.data.public_key) throw badRequest('field "public_key": missing required field');
          return certify(deps, req, role, parseSubjectKey(req.data.public_key));
        },
      },
    },
  });

  const issue = definePath({
    pattern: 'issue/:name',
    fields: {
      ...certificateFields,
      key_type: f.string().describe('rsa (default), ec or ed25519').default('rsa'),
      key_bits: f.int({ min: 0 }).describe('rsa: 2048 (default), 3072, 4096; ec: 256 (default), 384, 521').default(0),
    },
    synopsis: 'Generate a key pair and sign its public key with a CA role.',
    operations: {
      update: {
        summary: 'A new key pair and its certificate.',
        handler: async (req) => {
          const role = await caRole(deps, req.data.name);
          const spec = issueKeySpec(req.data.key_type, req.data.key_bits);
          const generated = await generateKey(spec);
          const res = await certify(deps, req, role, parseSubjectKey(generated.publicKey));
          res.data = { ...res.data, private_key: exportIssuedPrivateKey(generated), private_key_type: spec.kind === 'ecdsa' ? 'ec' : spec.kind };
          return res;
        },
      },
    },
  });
  return [sign, issue];
}
