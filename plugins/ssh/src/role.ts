/**
 * SSH roles (spec "SSH role"): an OTP role hands out one-time passwords for
 * hosts in its CIDRs; a CA role signs keys within its constraints. A write
 * replaces the whole role, as in Vault. Every refusal is a 400 naming the field.
 */
import { badRequest, cidr, f, FieldParseError, type FieldValues, parseCommaList, parseInteger } from '@strongroom/sdk-plugin';
import type { SshRole } from './store.js';

const ALGORITHM_SIGNERS = ['', 'default', 'ssh-rsa', 'rsa-sha2-256', 'rsa-sha2-512'] as const;

/** A list-or-comma-string field kept as Vault keeps it: one comma-separated string. */
const csv = () => f.commaList().transform((l) => l.join(','));

export const roleFields = {
  name: f.string().describe('Name of the role'),
  key_type: f.string().describe('otp or ca').optional(),
  default_user: f.string().describe('Default username (required for OTP roles)').default(''),
  default_user_template: f.bool().describe('default_user may hold an identity template').default(false),
  cidr_list: csv().describe('CIDR blocks the OTP role applies to').default(''),
  exclude_cidr_list: csv().describe('CIDR blocks the OTP role refuses').default(''),
  port: f.int({ min: 0, max: 65535 }).describe('Port returned with an OTP').default(22),
  allowed_users: csv().describe('Users the role allows ("*": any)').default(''),
  allowed_users_template: f.bool().describe('allowed_users may hold identity templates').default(false),
  allowed_domains: csv().describe('Domains host certificates may name ("*": any)').default(''),
  allowed_domains_template: f.bool().describe('allowed_domains may hold identity templates').default(false),
  ttl: f.duration().describe('Default certificate TTL').default(0),
  max_ttl: f.duration().describe('Maximum certificate TTL').default(0),
  allowed_critical_options: csv().describe('Critical options callers may set (empty: any)').default(''),
  allowed_extensions: csv().describe('Extensions callers may set ("*": any; empty: none)').default(''),
  default_critical_options: f.map().describe('Critical options set when the caller sets none').default({}),
  default_extensions: f.map().describe('Extensions set when the caller sets none').default({}),
  default_extensions_template: f.bool().describe('default_extensions values may hold identity templates').default(false),
  allow_user_certificates: f.bool().describe('User certificates may be signed').default(false),
  allow_host_certificates: f.bool().describe('Host certificates may be signed').default(false),
  allow_bare_domains: f.bool().describe('Host certificates may name the allowed domains themselves').default(false),
  allow_subdomains: f.bool().describe('Host certificates may name subdomains of the allowed domains').default(false),
  allow_user_key_ids: f.bool().describe('Callers may choose the key ID').default(false),
  key_id_format: f.string().describe('Key ID template: {{token_display_name}}, {{role_name}}, {{public_key_hash}}').default(''),
  allowed_user_key_lengths: f.map().describe('Key type to allowed sizes').default({}),
  algorithm_signer: f.string().describe('ssh-rsa, rsa-sha2-256, rsa-sha2-512 or default').default('default'),
  not_before_duration: f.duration().describe('Back-dating of the certificate validity').default(30),
  allow_empty_principals: f.bool().describe('Certificates without principals may be signed').default(false),
  issuer_ref: f.string().describe('Issuer that signs for this role (id, name or "default")').default('default'),
};

type RoleInput = FieldValues<typeof roleFields>;

const stringValues = (m: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));

/** allowed_user_key_lengths: each value an int, a list of ints or a comma string of ints. */
function keyLengths(m: Record<string, unknown>): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const [k, v] of Object.entries(m)) {
    try {
      out[k] = typeof v === 'number' ? [parseInteger(v)] : parseCommaList(v).map(parseInteger);
    } catch (e) {
      throw badRequest(`field "allowed_user_key_lengths": invalid sizes for "${k}": ${e instanceof FieldParseError ? e.message : 'not integers'}`);
    }
  }
  return out;
}

/** The stored role from a validated write. */
export function buildRole(d: RoleInput): SshRole {
  const keyType = String(d.key_type ?? '').toLowerCase();
  if (keyType === '') throw badRequest('field "key_type": missing required field');
  if (keyType === 'dynamic') throw badRequest('field "key_type": dynamic key type roles are no longer supported');
  if (keyType !== 'otp' && keyType !== 'ca') throw badRequest(`field "key_type": must be otp or ca, not "${keyType}"`);
  const port = Number(d.port) === 0 ? 22 : Number(d.port);
  const common = {
    default_user: String(d.default_user),
    allowed_users: String(d.allowed_users),
    cidr_list: '',
    exclude_cidr_list: '',
    port,
    default_user_template: false,
    allowed_users_template: false,
    allowed_domains: '',
    allowed_domains_template: false,
    ttl: 0,
    max_ttl: 0,
    allowed_critical_options: '',
    allowed_extensions: '',
    default_critical_options: {},
    default_extensions: {},
    default_extensions_template: false,
    allow_user_certificates: false,
    allow_host_certificates: false,
    allow_bare_domains: false,
    allow_subdomains: false,
    allow_user_key_ids: false,
    allow_empty_principals: false,
    key_id_format: '',
    allowed_user_key_lengths: {},
    algorithm_signer: '',
    not_before_duration: 0,
    issuer_ref: '',
  };
  if (keyType === 'otp') {
    if (common.default_user === '') throw badRequest('field "default_user": missing required field for OTP roles');
    const cidrs = cidr.validateCidrs(parseCommaList(d.cidr_list), 'cidr_list');
    const excluded = cidr.validateCidrs(parseCommaList(d.exclude_cidr_list), 'exclude_cidr_list');
    // No CIDRs is allowed, as in Vault: the role then serves only through config/zeroaddress.
    return { ...common, key_type: 'otp', cidr_list: cidrs.join(','), exclude_cidr_list: excluded.join(',') };
  }
  const algorithm = String(d.algorithm_signer);
  if (!(ALGORITHM_SIGNERS as readonly string[]).includes(algorithm)) {
    throw badRequest(`field "algorithm_signer": unknown algorithm signer "${algorithm}"; use ssh-rsa, rsa-sha2-256, rsa-sha2-512 or default`);
  }
  const role: SshRole = {
    ...common,
    key_type: 'ca',
    default_user_template: d.default_user_template === true,
    allowed_users_template: d.allowed_users_template === true,
    allowed_domains: String(d.allowed_domains),
    allowed_domains_template: d.allowed_domains_template === true,
    ttl: Number(d.ttl),
    max_ttl: Number(d.max_ttl),
    allowed_critical_options: String(d.allowed_critical_options),
    allowed_extensions: String(d.allowed_extensions),
    default_critical_options: stringValues(d.default_critical_options as Record<string, unknown>),
    default_extensions: stringValues(d.default_extensions as Record<string, unknown>),
    default_extensions_template: d.default_extensions_template === true,
    allow_user_certificates: d.allow_user_certificates === true,
    allow_host_certificates: d.allow_host_certificates === true,
    allow_bare_domains: d.allow_bare_domains === true,
    allow_subdomains: d.allow_subdomains === true,
    allow_user_key_ids: d.allow_user_key_ids === true,
    allow_empty_principals: d.allow_empty_principals === true,
    key_id_format: String(d.key_id_format),
    allowed_user_key_lengths: keyLengths(d.allowed_user_key_lengths as Record<string, unknown>),
    algorithm_signer: algorithm === '' ? 'default' : algorithm,
    not_before_duration: Number(d.not_before_duration),
    issuer_ref: String(d.issuer_ref) || 'default',
  };
  if (!role.allow_user_certificates && !role.allow_host_certificates) {
    throw badRequest('field "allow_user_certificates": either allow_user_certificates or allow_host_certificates must be true');
  }
  if (role.ttl > 0 && role.max_ttl > 0 && role.ttl > role.max_ttl) throw badRequest('field "ttl": must not be greater than max_ttl');
  return role;
}

/** What a read answers (Vault's shape per key type). */
export function roleView(r: Readonly<SshRole>): Record<string, unknown> {
  if (r.key_type === 'otp') {
    return {
      key_type: r.key_type,
      default_user: r.default_user,
      cidr_list: r.cidr_list,
      exclude_cidr_list: r.exclude_cidr_list,
      port: r.port,
      allowed_users: r.allowed_users,
    };
  }
  const { cidr_list: _c, exclude_cidr_list: _e, port: _p, ...ca } = r;
  return { ...ca };
}
