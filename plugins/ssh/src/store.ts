/**
 * The SSH engine's storage (the mount's barrier view, encrypted at rest by
 * the core). Keys hold names, issuer ids and OTP HMACs, never a secret:
 *
 *   roles/<name>          a role (OTP or CA)
 *   issuer/<id>           a CA issuer: name, public key, private key (PKCS#8 PEM)
 *   config/issuers        { default: <issuer id> | "" }
 *   config/zeroaddress    { roles: [...] } roles that accept any IP
 *   otp-salt              the mount's random HMAC key for OTPs
 *   otp/<hmac>            an issued OTP: HMAC-SHA256(otp-salt, otp) -> ip, username, role
 *   keys/<name>           host keys of the removed dynamic-keys feature (only tidied)
 *
 * Security invariants: an OTP is never stored, only its keyed HMAC; a CA
 * private key is stored only here and never returned. Roles, issuers, the
 * parsed CA signers, the default issuer and the zero-address roles are cached
 * in this process (the one writer of the mount's storage) and dropped on every
 * write and on the core's invalidation.
 */
import { createHmac, createPrivateKey, randomBytes, randomUUID } from 'node:crypto';
import { createKeyedMutex, type Storage } from '@strongroom/sdk-plugin';
import { createReadCache, getJSON, putJSON, type KeyedMutex } from '@strongroom/sdk-plugin/host';
import type { CaSigner } from './crypto/certificate.js';
import { publicBlobOf, type KeyKind } from './crypto/keys.js';
import type { SshRole } from './role.js';

export interface IssuerRecord {
  id: string;
  name: string;
  kind: KeyKind;
  bits: number;
  /** OpenSSH public key line. */
  public_key: string;
  /** PKCS#8 PEM. Never returned by any path. */
  private_key: string;
}

export interface OtpRecord {
  ip: string;
  username: string;
  role_name: string;
}

const ROLE = 'roles/';
const ISSUER = 'issuer/';
const CONFIG_ISSUERS = 'config/issuers';
const CONFIG_ZERO = 'config/zeroaddress';
const OTP = 'otp/';
const OTP_SALT = 'otp-salt';
export const DYNAMIC_KEYS = 'keys/';

export interface SshStore {
  getRole(name: string): Promise<SshRole | null>;
  putRole(name: string, role: SshRole): Promise<void>;
  deleteRole(name: string): Promise<void>;
  listRoles(): Promise<string[]>;

  getIssuer(id: string): Promise<IssuerRecord | null>;
  putIssuer(issuer: IssuerRecord): Promise<void>;
  deleteIssuer(id: string): Promise<void>;
  listIssuers(): Promise<string[]>;
  /** Issuer id -> name, kept in memory (sign resolves `issuer_ref` names without a storage round trip). */
  issuerNames(): Promise<ReadonlyMap<string, string>>;
  newIssuerId(): string;
  defaultIssuerId(): Promise<string>;
  setDefaultIssuer(id: string): Promise<void>;
  /** The issuer's key, parsed once per process. */
  signer(issuer: IssuerRecord): CaSigner;

  zeroAddressRoles(): Promise<string[] | null>;
  setZeroAddressRoles(roles: string[] | null): Promise<void>;

  /** The storage key of an OTP: its HMAC under the mount's salt. */
  otpKey(otp: string): Promise<string>;
  putOtp(key: string, rec: OtpRecord): Promise<void>;
  getOtp(key: string): Promise<OtpRecord | null>;
  deleteOtp(key: string): Promise<void>;

  /** Serializes read-modify-write sequences (issuer set changes, one OTP's use). */
  locked<T>(key: string, fn: () => Promise<T>): Promise<T>;
  storage: Storage;
  invalidate(key: string): void;
  clear(): void;
}

export function createSshStore(storage: Storage, mutex: KeyedMutex = createKeyedMutex()): SshStore {
  const roles = createReadCache<SshRole>({ max: 4096 });
  const issuers = createReadCache<IssuerRecord>({ max: 256 });
  const signers = new Map<string, CaSigner>();
  let defaultId: Promise<string> | null = null;
  let salt: Promise<Buffer> | null = null;
  let zero: Promise<string[] | null> | null = null;
  let names_: Promise<Map<string, string>> | null = null;
  const names = async (prefix: string) => (await storage.list(prefix)).filter((k) => !k.endsWith('/')).sort();

  const getIssuer = (id: string) => issuers.get(id, () => getJSON<IssuerRecord>(storage, ISSUER + id));

  const loadSalt = () =>
    mutex.run(OTP_SALT, async () => {
      const raw = await storage.get(OTP_SALT);
      if (raw !== null) return Buffer.from(raw);
      const fresh = randomBytes(32);
      await storage.put(OTP_SALT, fresh);
      return fresh;
    });

  return {
    getRole: (name) => roles.get(name, () => getJSON<SshRole>(storage, ROLE + name)),
    putRole: (name, role) => roles.write(name, () => putJSON(storage, ROLE + name, role)),
    deleteRole: (name) => roles.write(name, () => storage.delete(ROLE + name)),
    listRoles: () => names(ROLE),

    getIssuer,
    putIssuer: (issuer) =>
      issuers.write(issuer.id, async () => {
        signers.delete(issuer.id);
        names_ = null;
        await putJSON(storage, ISSUER + issuer.id, issuer);
        names_ = null;
      }),
    deleteIssuer: (id) =>
      issuers.write(id, async () => {
        signers.delete(id);
        names_ = null;
        await storage.delete(ISSUER + id);
        names_ = null;
      }),
    listIssuers: () => names(ISSUER),
    issuerNames() {
      names_ ??= (async () => {
        const m = new Map<string, string>();
        for (const id of await names(ISSUER)) {
          const i = await getIssuer(id);
          if (i) m.set(id, i.name);
        }
        return m;
      })();
      names_.catch(() => (names_ = null));
      return names_;
    },
    newIssuerId: () => randomUUID(),
    defaultIssuerId() {
      defaultId ??= getJSON<{ default?: string }>(storage, CONFIG_ISSUERS).then((c) => c?.default ?? '');
      defaultId.catch(() => (defaultId = null));
      return defaultId;
    },
    async setDefaultIssuer(id) {
      defaultId = null;
      await putJSON(storage, CONFIG_ISSUERS, { default: id });
      defaultId = Promise.resolve(id);
    },
    signer(issuer) {
      let s = signers.get(issuer.id);
      if (!s) {
        s = { kind: issuer.kind, bits: issuer.bits, blob: publicBlobOf(issuer.public_key).blob, key: createPrivateKey(issuer.private_key) };
        signers.set(issuer.id, s);
      }
      return s;
    },

    zeroAddressRoles() {
      zero ??= getJSON<{ roles: string[] }>(storage, CONFIG_ZERO).then((c) => c?.roles ?? null);
      zero.catch(() => (zero = null));
      return zero.then((l) => (l === null ? null : [...l]));
    },
    async setZeroAddressRoles(list) {
      zero = null;
      await (list === null ? storage.delete(CONFIG_ZERO) : putJSON(storage, CONFIG_ZERO, { roles: list }));
      zero = Promise.resolve(list === null ? null : [...list]);
    },

    async otpKey(otp) {
      salt ??= loadSalt();
      salt.catch(() => (salt = null));
      return OTP + createHmac('sha256', await salt).update(otp, 'utf8').digest('hex');
    },
    putOtp: (key, rec) => putJSON(storage, key, rec),
    getOtp: (key) => getJSON<OtpRecord>(storage, key),
    deleteOtp: (key) => storage.delete(key),

    locked: (key, fn) => mutex.run(key, fn),
    storage,
    invalidate(key) {
      if (key.startsWith(ROLE)) roles.drop(key.slice(ROLE.length));
      else if (key.startsWith(ISSUER)) {
        issuers.drop(key.slice(ISSUER.length));
        signers.delete(key.slice(ISSUER.length));
      } else if (key === CONFIG_ISSUERS) defaultId = null;
      else if (key === OTP_SALT) salt = null;
      else if (key === CONFIG_ZERO) zero = null;
    },
    clear() {
      roles.clear();
      issuers.clear();
      signers.clear();
      defaultId = null;
      salt = null;
      zero = null;
      names_ = null;
    },
  };
}
