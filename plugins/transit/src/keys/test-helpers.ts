import { isRsa, isSymmetric, type KeyType, symmetricKeySize } from './key-types.js';
import {
  addVersion,
  generateVersion,
  type KeyVersionRecord,
  loadPolicy,
  type LoadedPolicy,
  newPolicyRecord,
  type NewPolicyOptions,
} from './policy.js';

// RSA generation takes seconds at 4096 bits; tests share one generated version per RSA type.
const rsaVersions = new Map<KeyType, Promise<KeyVersionRecord>>();

/** A loaded policy with one generated version (tests only). */
export async function makeKey(type: KeyType, opts: Partial<NewPolicyOptions> = {}): Promise<LoadedPolicy> {
  const rec = newPolicyRecord({ name: 'k', type, ...opts });
  const size = type === 'hmac' ? rec.key_size : isSymmetric(type) ? symmetricKeySize(type) : 0;
  let v: KeyVersionRecord;
  if (isRsa(type)) {
    if (!rsaVersions.has(type)) rsaVersions.set(type, generateVersion(type, 0, Date.now()));
    v = { ...(await rsaVersions.get(type)!) };
  } else {
    v = await generateVersion(type, size, Date.now());
  }
  addVersion(rec, v);
  return loadPolicy(rec);
}
