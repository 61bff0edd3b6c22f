/**
 * CA issuers (spec "SSH issuer" and its rows of "States and transitions"): a
 * mount holds several; one may be the default. The first issuer, one
 * submitted with `set_default`, and any submitted through config/ca become
 * the default; deleting the default issuer (or DELETE config/ca) leaves none,
 * and what needs one then fails with a 400 saying so.
 */
import { randomUUID } from 'node:crypto';
import { badRequest, f, type FieldValues } from '@strongroom/sdk-plugin';
import { caKeySpec, generateKey, importCaPair } from './crypto/keys.js';
import type { IssuerRecord, SshStore } from './store.js';

/** Fields of config/ca and issuers/import. */
export const submitIssuerFields = {
  private_key: f.sensitive(f.string()).describe('CA private key (OpenSSH or PEM); with generate_signing_key false').default(''),
  public_key: f.string().describe('CA public key (OpenSSH line); with generate_signing_key false').default(''),
  generate_signing_key: f.bool().describe('Generate the CA key pair').default(true),
  key_type: f.string().describe('ssh-rsa (default), ecdsa-sha2-nistp256/384/521, ssh-ed25519, or rsa, ec, ed25519').default('ssh-rsa'),
  key_bits: f.int({ min: 0 }).describe('RSA size (0: 4096) or, for ec, the curve (256, 384, 521)').default(0),
};

type SubmitInput = FieldValues<typeof submitIssuerFields>;

const NAME = /^\w(?:[\w.@-]*\w)?$/;

export function issuerView(i: Readonly<IssuerRecord>): Record<string, unknown> {
  return { issuer_id: i.id, issuer_name: i.name, public_key: publicKeyText(i) };
}

/** The public key as served (text/plain and JSON): the OpenSSH line with a newline, as Vault writes it. */
export const publicKeyText = (i: Readonly<IssuerRecord>) => `${i.public_key}\n`;

/** Checks a new or changed issuer name: unique, not "default", a generic name. "" is allowed (no name). */
export async function checkIssuerName(store: SshStore, name: string, selfId: string): Promise<void> {
  if (name === '') return;
  if (name === 'default') throw badRequest('field "issuer_name": "default" is reserved');
  if (name.length > 128 || !NAME.test(name)) throw badRequest('field "issuer_name": letters, digits, "_", "-", "." and "@" only, at most 128 characters');
  for (const other of await allIssuers(store)) {
    if (other.id !== selfId && other.name === name) throw badRequest(`field "issuer_name": issuer name "${name}" is already in use`);
  }
}

/** Every issuer, as cached (list and records): no storage round trip once warm. */
async function allIssuers(store: SshStore): Promise<Readonly<IssuerRecord>[]> {
  const out: Readonly<IssuerRecord>[] = [];
  for (const id of await store.issuers.list()) {
    const i = await store.issuers.view(id);
    if (i) out.push(i);
  }
  return out;
}

/** Resolves an issuer_ref (id, name or "default"); a 400 says why it cannot. */
export async function resolveIssuer(store: SshStore, ref: string, field = 'issuer_ref'): Promise<Readonly<IssuerRecord>> {
  if (ref === '' || ref === 'default') {
    const id = await store.defaultIssuerId();
    const issuer = id ? await store.issuers.view(id) : null;
    if (!issuer) throw badRequest(`no default issuer is configured (${field} "default"); submit one at config/ca or set one at config/issuers`);
    return issuer;
  }
  // An id wins over a name; both come from the cached issuer list, so an unknown ref never becomes a storage key.
  const all = await allIssuers(store);
  const issuer = all.find((i) => i.id === ref) ?? all.find((i) => i.name === ref);
  if (issuer) return issuer;
  throw badRequest(`field "${field}": issuer "${ref}" does not exist`);
}

/** Generates or imports a CA key pair and stores it as a new issuer; `makeDefault` or a first issuer becomes the default. */
export async function submitIssuer(store: SshStore, d: SubmitInput, name: string, makeDefault: boolean): Promise<IssuerRecord> {
  let key;
  if (d.generate_signing_key && d.private_key === '' && d.public_key === '') {
    key = await generateKey(caKeySpec(d.key_type, d.key_bits));
  } else if (d.private_key === '' || d.public_key === '') {
    throw badRequest(`field "${d.private_key === '' ? 'private_key' : 'public_key'}": both private_key and public_key are required when generate_signing_key is false`);
  } else {
    key = importCaPair(d.private_key, d.public_key);
  }
  return store.issuerConfig.lock(async () => {
    await checkIssuerName(store, name, '');
    const issuer: IssuerRecord = { id: randomUUID(), name, kind: key.kind, bits: key.bits, public_key: key.publicKey, private_key: key.privatePkcs8 };
    const current = await store.defaultIssuerId();
    const ops = [store.issuers.putOp(issuer.id, issuer)];
    if (makeDefault || !current || !(await store.issuers.view(current))) ops.push(store.issuerConfig.putOp({ default: issuer.id }));
    await store.records.batch(ops);
    return issuer;
  });
}
