/**
 * Key export (`export/:key_type/:name(/:version)`) and the public-key form
 * shown on key reads.
 *
 * Security invariant: private and symmetric material leaves only for a key
 * marked `exportable` (which can never be unset), never for a soft-deleted
 * key, and never for a version below `min_decryption_version` or trimmed.
 */
import type { KeyObject } from 'node:crypto';
import { badRequest } from '@strongroom/sdk-plugin';
import { isEcdsa, isRsa, isSymmetric } from './key-types.js';
import type { LoadedPolicy, LoadedVersion } from './policy.js';

export const EXPORT_KEY_TYPES = ['encryption-key', 'signing-key', 'hmac-key', 'public-key'] as const;
export type ExportKeyType = (typeof EXPORT_KEY_TYPES)[number];
export const EXPORT_FORMATS = ['', 'raw', 'der', 'pem'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Ed25519 public key as raw 32 bytes, base64 (the form Vault uses). */
function ed25519PublicRaw(pub: KeyObject): string {
  const jwk = pub.export({ format: 'jwk' });
  return Buffer.from(jwk.x ?? '', 'base64url').toString('base64');
}

/** The public key as shown on reads: base64 raw for Ed25519, PKIX PEM otherwise. */
export function publicKeyForRead(p: LoadedPolicy, lv: LoadedVersion): string {
  if (!lv.publicKey) return '';
  if (p.record.type === 'ed25519') return ed25519PublicRaw(lv.publicKey);
  return lv.publicKey.export({ type: 'spki', format: 'pem' }).toString();
}

/** Versions selected by the `version` path part: all valid ones, `latest`, or one number. */
export function selectVersions(p: LoadedPolicy, version: string | undefined): number[] {
  const r = p.record;
  const minValid = Math.max(1, r.min_decryption_version, r.min_available_version);
  if (version === undefined || version === '') {
    const out: number[] = [];
    for (let v = minValid; v <= r.latest_version; v++) if (r.versions[String(v)]) out.push(v);
    return out;
  }
  const v = version === 'latest' ? r.latest_version : Number(version);
  if (!Number.isInteger(v) || v < 1 || v > r.latest_version || !r.versions[String(v)]) {
    throw badRequest(`invalid version ${version}`);
  }
  if (v < minValid) throw badRequest('cannot export a version below the minimum decryption version');
  return [v];
}

function privateKeyText(p: LoadedPolicy, priv: KeyObject, format: ExportFormat): string {
  const t = p.record.type;
  if (format === 'der') return priv.export({ type: 'pkcs8', format: 'der' }).toString('base64');
  if (format === 'pem') return priv.export({ type: 'pkcs8', format: 'pem' }).toString();
  if (t === 'ed25519') {
    const jwk = priv.export({ format: 'jwk' });
    return Buffer.concat([Buffer.from(jwk.d ?? '', 'base64url'), Buffer.from(jwk.x ?? '', 'base64url')]).toString('base64');
  }
  if (format === 'raw') throw badRequest('format raw is only valid for symmetric and ed25519 keys');
  if (isRsa(t)) return priv.export({ type: 'pkcs1', format: 'pem' }).toString();
  if (isEcdsa(t)) return priv.export({ type: 'sec1', format: 'pem' }).toString();
  throw badRequest(`unsupported key type ${t}`);
}

function exportOne(p: LoadedPolicy, lv: LoadedVersion, keyType: ExportKeyType, format: ExportFormat): string {
  const t = p.record.type;
  switch (keyType) {
    case 'hmac-key': {
      if (format === 'der' || format === 'pem') throw badRequest('hmac-key export supports only the raw format');
      const k = t === 'hmac' ? lv.key : lv.hmacKey;
      if (!k) throw badRequest('key version has no HMAC key');
      return k.toString('base64');
    }
    case 'encryption-key': {
      if (isSymmetric(t)) {
        if (format === 'der' || format === 'pem') throw badRequest('symmetric keys support only the raw format');
        if (!lv.key) throw badRequest('key version has no key material');
        return lv.key.toString('base64');
      }
      if (!isRsa(t)) throw badRequest('encryption-key export is only valid for keys that support encryption');
      if (!lv.privateKey) throw badRequest('key version has no private key: only a public key was imported');
      return privateKeyText(p, lv.privateKey, format);
    }
    case 'signing-key': {
      if (!(t === 'ed25519' || isEcdsa(t) || isRsa(t))) throw badRequest('signing-key export is only valid for keys that support signing');
      if (!lv.privateKey) throw badRequest('key version has no private key: only a public key was imported');
      return privateKeyText(p, lv.privateKey, format);
    }
    case 'public-key': {
      if (!lv.publicKey) throw badRequest('public-key export is only valid for asymmetric keys');
      if (format === 'der') return lv.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
      if (format === 'pem') return lv.publicKey.export({ type: 'spki', format: 'pem' }).toString();
      if (t === 'ed25519') return ed25519PublicRaw(lv.publicKey);
      if (format === 'raw') throw badRequest('format raw is only valid for symmetric and ed25519 keys');
      return lv.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    }
  }
}

/** `data.keys` of an export: version -> exported text. */
export function exportKeys(
  p: LoadedPolicy,
  keyType: ExportKeyType,
  version: string | undefined,
  format: ExportFormat,
): Record<string, string> {
  if (p.record.soft_deleted) throw badRequest(`key "${p.record.name}" is soft-deleted; restore it first`);
  // The public half is public: reads already show it, so it needs no `exportable`.
  if (keyType !== 'public-key' && !p.record.exportable) throw badRequest('private key material is not exportable');
  const out: Record<string, string> = {};
  for (const v of selectVersions(p, version)) out[String(v)] = exportOne(p, p.version(v), keyType, format);
  return out;
}

/** Raw material of one version as BYOK wraps it: symmetric bytes, or PKCS#8 DER of a private key. */
export function byokMaterial(p: LoadedPolicy, lv: LoadedVersion): Buffer {
  if (lv.key) return lv.key;
  if (lv.privateKey) return lv.privateKey.export({ type: 'pkcs8', format: 'der' });
  throw badRequest('key version has no private key material to export');
}

