/**
 * Credential material the engine generates and hands to the plugin (a plugin
 * never invents credentials). Passwords: the named password policy (the
 * role's credential_config, else the connection's), else the built-in
 * default (20 characters with an upper, a lower, a digit and a dash). Never
 * logged, never put in an error.
 */
import { generateKeyPairSync } from 'node:crypto';
import { badRequest, defaultPasswordPolicy, generatePassword, type SystemView } from '@strongroom/sdk-plugin';
import type { ConnectionConfig, CredentialType } from './store.js';

export async function newPassword(system: Pick<SystemView, 'generatePasswordFromPolicy'>, cfg: ConnectionConfig, credentialConfig: Record<string, string> = {}): Promise<string> {
  const policy = credentialConfig.password_policy || cfg.password_policy;
  return policy ? system.generatePasswordFromPolicy(policy) : generatePassword(defaultPasswordPolicy());
}

const RSA_KEY_BITS = [2048, 3072, 4096];

/** An RSA key pair for credential_type rsa_private_key: the public key goes to the plugin, the PKCS#8 PEM to the caller. */
export function newRsaKeyPair(credentialConfig: Record<string, string>): { publicKey: string; privateKey: string } {
  const bits = Number(credentialConfig.key_bits ?? 2048);
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: bits,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKey, privateKey };
}

/** Checks credential_config against its credential_type (the spec's table); returns it with defaults filled. */
export function checkCredentialConfig(type: CredentialType, raw: Record<string, unknown>): Record<string, string> {
  const cfg: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) cfg[k] = String(v);
  const allowed: Record<CredentialType, string[]> = {
    password: ['password_policy'],
    rsa_private_key: ['key_bits', 'format'],
    client_certificate: ['common_name_template', 'ca_cert', 'ca_private_key', 'key_type', 'key_bits', 'signature_bits'],
  };
  for (const k of Object.keys(cfg)) {
    if (!allowed[type].includes(k)) throw badRequest(`credential_config: "${k}" is not an option of credential_type ${type}`);
  }
  if (type === 'rsa_private_key') {
    cfg.key_bits ??= '2048';
    cfg.format ??= 'pkcs8';
    if (!RSA_KEY_BITS.includes(Number(cfg.key_bits))) throw badRequest('credential_config: key_bits must be 2048, 3072 or 4096');
    if (cfg.format !== 'pkcs8') throw badRequest('credential_config: format must be pkcs8');
  }
  if (type === 'client_certificate') {
    const keyType = cfg.key_type;
    if (!keyType || !['rsa', 'ed25519', 'ec'].includes(keyType)) throw badRequest('credential_config: key_type is required: rsa, ed25519 or ec');
    const bits = cfg.key_bits === undefined ? undefined : Number(cfg.key_bits);
    if (keyType === 'rsa' && bits !== undefined && !RSA_KEY_BITS.includes(bits)) throw badRequest('credential_config: key_bits must be 2048, 3072 or 4096 for rsa');
    if (keyType === 'ec' && bits !== undefined && ![224, 256, 384, 521].includes(bits)) throw badRequest('credential_config: key_bits must be 224, 256, 384 or 521 for ec');
    if (cfg.signature_bits !== undefined && ![256, 384, 512].includes(Number(cfg.signature_bits))) throw badRequest('credential_config: signature_bits must be 256, 384 or 512');
  }
  return cfg;
}
