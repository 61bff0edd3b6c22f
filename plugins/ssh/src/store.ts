/**
 * The SSH engine's storage (the mount's barrier view, encrypted at rest by
 * the core). Keys hold names, issuer ids and OTP HMACs, never a secret:
 *
 *   roles/<name>          a role (OTP or CA)
 *   issuer/<id>           a CA issuer: name, public key, private key (PKCS#8 PEM)
 *   config/issuers        { default: <issuer id> | "" }
 *   config/zeroaddress    { roles: [...] } roles that accept any IP
 *   otp-salt              the mount's random HMAC key for OTPs (raw bytes)
 *   otp/<hmac>            an issued OTP: HMAC-SHA256(otp-salt, otp) -> ip, username, role
 *   keys/<name>           host keys of the removed dynamic-keys feature (only tidied)
 *
 * Security invariants: an OTP is never stored, only its keyed HMAC; a CA
 * private key is stored only here and never returned.
 *
 * Records live in the SDK's record store (schemas below). Roles, issuers
 * (and their list, so a sign by issuer name makes no storage round trip),
 * the default issuer and the zero-address roles are cached; OTPs are read
 * once and never cached. A CA signer is parsed once per cached issuer.
 */
import { createHmac, createPrivateKey, randomBytes } from 'node:crypto';
import { createRecordStore, rawBytesCodec, type Storage } from '@strongroom/sdk-plugin';
import { z } from 'zod';
import type { CaSigner } from './crypto/certificate.js';
import { publicBlobOf } from './crypto/keys.js';

const sshRole = z.object({
  key_type: z.enum(['otp', 'ca']),
  default_user: z.string(),
  allowed_users: z.string(),
  // OTP
  cidr_list: z.string(),
  exclude_cidr_list: z.string(),
  port: z.number(),
  // CA
  default_user_template: z.boolean(),
  allowed_users_template: z.boolean(),
  allowed_domains: z.string(),
  allowed_domains_template: z.boolean(),
  /** Seconds; 0: the mount's default (capped by max_ttl). */
  ttl: z.number(),
  /** Seconds; 0: the mount's maximum. */
  max_ttl: z.number(),
  allowed_critical_options: z.string(),
  allowed_extensions: z.string(),
  default_critical_options: z.record(z.string(), z.string()),
  default_extensions: z.record(z.string(), z.string()),
  default_extensions_template: z.boolean(),
  allow_user_certificates: z.boolean(),
  allow_host_certificates: z.boolean(),
  allow_bare_domains: z.boolean(),
  allow_subdomains: z.boolean(),
  allow_user_key_ids: z.boolean(),
  allow_empty_principals: z.boolean(),
  key_id_format: z.string(),
  allowed_user_key_lengths: z.record(z.string(), z.array(z.number())),
  algorithm_signer: z.string(),
  not_before_duration: z.number(),
  issuer_ref: z.string(),
});
export type SshRole = z.output<typeof sshRole>;

const issuerRecord = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(['rsa', 'ecdsa', 'ed25519']),
  bits: z.number(),
  /** OpenSSH public key line. */
  public_key: z.string(),
  /** PKCS#8 PEM. Never returned by any path. */
  private_key: z.string(),
});
export type IssuerRecord = z.output<typeof issuerRecord>;

const otpRecord = z.object({ ip: z.string(), username: z.string(), role_name: z.string() });

export type SshStore = ReturnType<typeof createSshStore>;

export function createSshStore(storage: Storage) {
  const records = createRecordStore(storage);
  const issuers = records.kind('issuer/', issuerRecord, { cacheList: true });
  const issuerConfig = records.single('config/issuers', z.object({ default: z.string().default('') }));
  const zeroAddress = records.single('config/zeroaddress', z.object({ roles: z.array(z.string()) }));
  const otpSalt = records.single('otp-salt', z.object({ bytes: z.string() }), { codec: rawBytesCodec });
  const saltKey = otpSalt.memo((s) => Buffer.from(s.bytes, 'base64'));
  return {
    records,
    roles: records.kind('roles/', sshRole),
    issuers,
    /** The default issuer; its lock also serializes changes to the issuer set. */
    issuerConfig,
    /** Its lock serializes changes to the zero-address list (and the role deletes that edit it). */
    zeroAddress,
    /** Named by the OTP's HMAC (`otpName`); read once, so never cached. */
    otps: records.kind('otp/', otpRecord, { cache: false }),
    dynamicKeys: records.kind('keys/', z.unknown(), { cache: false }),

    async defaultIssuerId(): Promise<string> {
      return (await issuerConfig.view())?.default ?? '';
    },
    async zeroAddressRoles(): Promise<string[] | null> {
      const z = await zeroAddress.view();
      return z ? [...z.roles] : null;
    },
    /** The issuer's key, parsed once per cached issuer record (pass the record `view` gave). */
    signer: issuers.memo((i): CaSigner => ({ kind: i.kind, bits: i.bits, blob: publicBlobOf(i.public_key).blob, key: createPrivateKey(i.private_key) })),
    /** An OTP's record name: its HMAC under the mount's salt (made on first use). */
    async otpName(otp: string): Promise<string> {
      const salt = (await otpSalt.view()) ?? (await otpSalt.update((cur) => (cur ? undefined : { bytes: randomBytes(32).toString('base64') })));
      return createHmac('sha256', saltKey(salt!)).update(otp, 'utf8').digest('hex');
    },
  };
}
