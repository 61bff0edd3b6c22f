/**
 * What a CA role allows a sign or issue request (spec "SSH role", Vault's
 * documented rules): certificate type, principals, key ID, TTL, critical
 * options, extensions and the key's type and size. Pure: every refusal is a
 * 400 naming the request field (or the role field) that decides it.
 */
import { badRequest } from '@strongroom/sdk-plugin';
import { publicKeyHash, type RsaAlgorithm } from './crypto/certificate.js';
import type { KeyKind, SubjectKey } from './crypto/keys.js';
import type { SshRole } from './store.js';
import { hasTemplate, renderIdentityTemplate, TemplateError, type Identity } from './templates.js';

export interface SignRequest {
  /** Undefined when the caller did not send it (the role's default applies). */
  valid_principals?: string[];
  cert_type: string;
  key_id: string;
  /** Seconds; undefined when not sent. */
  ttl?: number;
  critical_options: Record<string, unknown>;
  extensions: Record<string, unknown>;
}

export interface CertificatePlan {
  certType: 'user' | 'host';
  principals: string[];
  keyId: string;
  /** Seconds. */
  ttl: number;
  criticalOptions: Record<string, string>;
  extensions: Record<string, string>;
}

export interface PlanContext {
  roleName: string;
  /** The token's display name: only for the key ID's `{{token_display_name}}`, never for identity. */
  displayName: string;
  identity: Identity;
  /** The mount's default and maximum lease TTLs, seconds. */
  mountDefaultTtl: number;
  mountMaxTtl: number;
}

const list = (s: string) => [...new Set(s.split(',').map((x) => x.trim()).filter((x) => x !== ''))];
const strings = (m: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));

function render(tpl: string, id: Identity, field: string): string {
  try {
    return renderIdentityTemplate(tpl, id);
  } catch (e) {
    if (e instanceof TemplateError) throw badRequest(`field "${field}": template could not be rendered: ${e.message}`);
    throw e;
  }
}

/** The entries of a templated allow-list that render, and why the others did not. */
function renderEach(entries: string[], id: Identity): { allowed: string[]; unresolved: string[] } {
  const allowed: string[] = [];
  const unresolved: string[] = [];
  for (const entry of entries) {
    try {
      allowed.push(renderIdentityTemplate(entry, id));
    } catch (e) {
      if (!(e instanceof TemplateError)) throw e;
      unresolved.push(`${entry}: ${e.message}`);
    }
  }
  return { allowed, unresolved };
}

export function planCertificate(role: Readonly<SshRole>, req: SignRequest, subject: SubjectKey, ctx: PlanContext): CertificatePlan {

  // Key ID: the caller's only when the role allows it.
  let keyId: string;
  if (req.key_id !== '') {
    if (!role.allow_user_key_ids) throw badRequest('field "key_id": setting key_id is not allowed by role (allow_user_key_ids is false)');
    keyId = req.key_id;
  } else {
    const format = role.key_id_format || (ctx.displayName ? 'vault-{{token_display_name}}-{{public_key_hash}}' : 'vault-{{public_key_hash}}');
    const vars: Record<string, string> = { token_display_name: ctx.displayName, role_name: ctx.roleName, public_key_hash: publicKeyHash(subject) };
    keyId = format.replace(/\{\{(token_display_name|role_name|public_key_hash)\}\}/g, (_m, k: string) => vars[k] as string);
  }

  let certType: 'user' | 'host';
  if (req.cert_type === 'user') {
    if (!role.allow_user_certificates) throw badRequest('field "cert_type": cert_type "user" is not allowed by role (allow_user_certificates is false)');
    certType = 'user';
  } else if (req.cert_type === 'host') {
    if (!role.allow_host_certificates) throw badRequest('field "cert_type": cert_type "host" is not allowed by role (allow_host_certificates is false)');
    certType = 'host';
  } else {
    throw badRequest('field "cert_type": must be either "user" or "host"');
  }

  const principals =
    certType === 'host'
      ? validPrincipals(role, req, '', role.allowed_domains, role.allowed_domains_template, 'allowed_domains', ctx.identity, (allowed, p) =>
          allowed.some((d) => (p === d && role.allow_bare_domains) || (role.allow_subdomains && p.endsWith(`.${d}`))),
        )
      : validPrincipals(
          role,
          req,
          role.default_user_template ? render(role.default_user, ctx.identity, 'default_user') : role.default_user,
          role.allowed_users,
          role.allowed_users_template,
          'allowed_users',
          ctx.identity,
          (allowed, p) => allowed.includes(p),
        );

  // TTL: the caller's, else the role's, else the mount's; above max_ttl a chosen TTL is refused and a default one capped.
  const maxTtl = role.max_ttl || ctx.mountMaxTtl;
  let ttl = req.ttl !== undefined && req.ttl > 0 ? req.ttl : role.ttl || ctx.mountDefaultTtl;
  if (ttl > maxTtl) {
    if (req.ttl !== undefined && req.ttl > 0) throw badRequest(`field "ttl": ttl is larger than maximum allowed ${maxTtl} (max_ttl)`);
    ttl = maxTtl;
  }

  // Critical options: the caller's (within allowed_critical_options when set), else the role's defaults.
  let criticalOptions: Record<string, string>;
  if (Object.keys(req.critical_options).length === 0) {
    criticalOptions = { ...role.default_critical_options };
  } else {
    criticalOptions = strings(req.critical_options);
    if (role.allowed_critical_options !== '') {
      const allowed = list(role.allowed_critical_options);
      const refused = Object.keys(criticalOptions).filter((o) => !allowed.includes(o));
      if (refused.length) throw badRequest(`field "critical_options": critical options not on allowed list (allowed_critical_options): ${refused.sort().join(', ')}`);
    }
  }

  // Extensions: the caller's only within allowed_extensions ("*": any, unset: none), else the role's defaults.
  let extensions: Record<string, string>;
  if (Object.keys(req.extensions).length > 0) {
    extensions = strings(req.extensions);
    if (role.allowed_extensions !== '*') {
      const allowed = list(role.allowed_extensions);
      const refused = Object.keys(extensions).filter((e) => !allowed.includes(e));
      if (refused.length) throw badRequest(`field "extensions": extensions not on allowed list (allowed_extensions): ${refused.sort().join(', ')}`);
    }
  } else if (role.default_extensions_template) {
    extensions = {};
    for (const [k, v] of Object.entries(role.default_extensions)) extensions[k] = hasTemplate(v) ? render(v, ctx.identity, 'default_extensions') : v;
  } else {
    extensions = { ...role.default_extensions };
  }

  checkKeyLength(role, subject);
  return { certType, principals, keyId, ttl, criticalOptions, extensions };
}

function validPrincipals(
  role: Readonly<SshRole>,
  req: SignRequest,
  defaultPrincipal: string,
  allowedByRole: string,
  templated: boolean,
  roleField: string,
  identity: Identity,
  allows: (allowed: string[], principal: string) => boolean,
): string[] {
  const requested = req.valid_principals !== undefined ? [...new Set(req.valid_principals)] : list(defaultPrincipal);
  // A templated entry the caller's identity cannot fill allows nobody (Vault: the principal is invalid).
  const { allowed, unresolved } = templated ? renderEach(list(allowedByRole), identity) : { allowed: list(allowedByRole), unresolved: [] };
  const why = unresolved.length ? `; templates not resolved: ${unresolved.join('; ')}` : '';
  if (requested.length === 0) {
    if (!role.allow_empty_principals && allowedByRole !== '*') {
      throw badRequest('field "valid_principals": refusing to issue an unsafe, globally valid certificate with no principals; set valid_principals or the role\'s default_user (allow_empty_principals is false)');
    }
    return [];
  }
  if (allowed.length === 0) throw badRequest(`field "valid_principals": the role allows no principals (${roleField} allows none${why})`);
  if (allowedByRole === '*') return requested;
  for (const p of requested) {
    if (!allows(allowed, p)) throw badRequest(`field "valid_principals": "${p}" is not a valid value (${roleField}${why})`);
  }
  return requested;
}

/** Identifiers allowed_user_key_lengths may use for each key family. */
function mapKeysFor(subject: SubjectKey): string[] {
  switch (subject.family) {
    case 'rsa':
      return ['rsa', 'ssh-rsa'];
    case 'dsa':
      return ['dsa', 'ssh-dss'];
    case 'ecdsa':
      return ['ecdsa', 'ec', subject.sshType];
    case 'ed25519':
      return ['ed25519', 'ssh-ed25519'];
  }
}

function checkKeyLength(role: Readonly<SshRole>, subject: SubjectKey): void {
  const rules = role.allowed_user_key_lengths;
  if (Object.keys(rules).length === 0) return;
  let present = false;
  let pass = false;
  for (const name of mapKeysFor(subject)) {
    const sizes = rules[name];
    if (!sizes) continue;
    present = true;
    // RSA and DSA sizes always count; an ECDSA size counts under the generic names, a named curve or ed25519 fixes it.
    const sized = subject.family === 'rsa' || subject.family === 'dsa' || name === 'ecdsa' || name === 'ec';
    if (sizes.some((s) => !sized || s === subject.bits)) pass = true;
  }
  if (!present) throw badRequest(`field "public_key": keys of type ${subject.family} are not allowed (allowed_user_key_lengths)`);
  if (!pass) throw badRequest(`field "public_key": key is of an invalid size: ${subject.bits} (allowed_user_key_lengths)`);
}

/** The signature algorithm for this role and CA; a non-RSA CA needs "default". */
export function signatureAlgorithm(role: Readonly<SshRole>, caKind: KeyKind): RsaAlgorithm {
  const a = role.algorithm_signer;
  if (caKind !== 'rsa') {
    if (a !== 'default' && a !== '') throw badRequest(`field "algorithm_signer": "${a}" needs an RSA CA key; the issuer's key is ${caKind} (set it to default)`);
    return 'rsa-sha2-256';
  }
  return a === 'ssh-rsa' || a === 'rsa-sha2-512' ? a : 'rsa-sha2-256';
}
