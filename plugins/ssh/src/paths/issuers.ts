/**
 * The CA issuers: config/ca (the default issuer), issuers/import, issuer/:ref,
 * their public keys (unauthenticated, text/plain), config/issuers and LIST issuers.
 */
import { badRequest, definePath, f, type LogicalResponse, type PathDef } from '@strongroom/sdk-plugin';
import { checkIssuerName, issuerView, publicKeyText, resolveIssuer, submitIssuer, submitIssuerFields } from '../issuers.js';
import type { IssuerRecord } from '../store.js';
import type { SshDeps } from './deps.js';

const rawKey = (i: Readonly<IssuerRecord>): LogicalResponse => ({ raw: { status: 200, contentType: 'text/plain', body: publicKeyText(i) } });

export function issuerPaths({ store }: SshDeps): PathDef[] {
  const configCa = definePath({
    pattern: 'config/ca',
    fields: submitIssuerFields,
    synopsis: 'The default CA issuer: submit or generate one, read it, or delete every issuer.',
    operations: {
      read: { summary: 'Read the default issuer.', handler: async () => ({ data: issuerView(await resolveIssuer(store, 'default')) }) },
      update: {
        summary: 'Generate or import a CA key pair as a new issuer and make it the default.',
        handler: async (req) => ({ data: issuerView(await submitIssuer(store, req.data, '', true)) }),
      },
      delete: {
        summary: 'Delete every issuer, the default included.',
        handler: async () => {
          const n = await store.issuerConfig.lock(async () => {
            const ids = await store.issuers.list();
            await store.records.batch([...ids.map((id) => store.issuers.deleteOp(id)), store.issuerConfig.putOp({ default: '' })]);
            return ids.length;
          });
          // Vault's single CA is deleted silently; only issuers beyond the default are worth a warning.
          return n > 1 ? { warnings: [`Deleted ${n} issuers, including the configured 'default'.`] } : null;
        },
      },
    },
  });

  const importIssuer = definePath({
    pattern: 'issuers/import{/:issuer_name}',
    fields: {
      ...submitIssuerFields,
      issuer_name: f.string().describe('Unique name of the issuer (not "default")').optional(),
      set_default: f.bool().describe('Make the new issuer the default (the first issuer always is)').default(false),
    },
    synopsis: 'Generate or import a CA key pair as a new issuer.',
    operations: {
      update: {
        summary: 'Add an issuer.',
        handler: async (req) => ({ data: issuerView(await submitIssuer(store, req.data, req.data.issuer_name ?? '', req.data.set_default)) }),
      },
    },
  });

  const listIssuers = definePath({
    pattern: 'issuers/',
    synopsis: 'List the issuers.',
    operations: {
      list: {
        summary: 'Issuer ids, with name, is_default and public_key in key_info.',
        handler: async (req) => {
          const keys = await store.issuers.list(req.list);
          const def = await store.defaultIssuerId();
          const key_info: Record<string, unknown> = {};
          for (const id of keys) {
            const i = await store.issuers.view(id);
            if (i) key_info[id] = { issuer_name: i.name, is_default: i.id === def, public_key: publicKeyText(i) };
          }
          return { data: { keys, key_info } };
        },
      },
    },
  });

  const rename = async (ref: string, name: string | undefined) =>
    store.issuerConfig.lock(async () => {
      const i = await resolveIssuer(store, ref);
      if (name === undefined || name === i.name) return { data: issuerView(i) };
      await checkIssuerName(store, name, i.id);
      const next = await store.issuers.put(i.id, { ...i, name });
      return { data: issuerView(next) };
    });

  const issuer = definePath({
    pattern: 'issuer/:issuer_ref',
    fields: {
      issuer_ref: f.string().describe('Issuer id, name, or "default"'),
      issuer_name: f.string().describe('New name of the issuer').optional(),
    },
    synopsis: 'Read, rename or delete an issuer.',
    operations: {
      read: { summary: 'Read an issuer.', handler: async (req) => ({ data: issuerView(await resolveIssuer(store, req.data.issuer_ref)) }) },
      update: { summary: 'Rename an issuer.', handler: (req) => rename(req.data.issuer_ref, req.data.issuer_name) },
      patch: { summary: 'Rename an issuer.', handler: (req) => rename(req.data.issuer_ref, req.data.issuer_name) },
      delete: {
        summary: 'Delete an issuer; deleting the default leaves the mount without one.',
        handler: async (req) => {
          await store.issuerConfig.lock(async () => {
            const i = await resolveIssuer(store, req.data.issuer_ref).catch(() => null);
            if (!i) return;
            const ops = [store.issuers.deleteOp(i.id)];
            if ((await store.defaultIssuerId()) === i.id) ops.push(store.issuerConfig.putOp({ default: '' }));
            await store.records.batch(ops);
          });
          return null;
        },
      },
    },
  });

  const issuerPublicKey = definePath({
    pattern: 'issuer/:issuer_ref/public_key',
    fields: { issuer_ref: f.string().describe('Issuer id, name, or "default"') },
    unauthenticated: true,
    synopsis: "An issuer's public key, as text/plain.",
    operations: { read: { summary: 'The OpenSSH public key line.', handler: async (req) => rawKey(await resolveIssuer(store, req.data.issuer_ref)) } },
  });

  const publicKey = definePath({
    pattern: 'public_key',
    unauthenticated: true,
    synopsis: "The default issuer's public key, as text/plain (for sshd's TrustedUserCAKeys).",
    operations: { read: { summary: 'The OpenSSH public key line.', handler: async () => rawKey(await resolveIssuer(store, 'default')) } },
  });

  const configIssuers = definePath({
    pattern: 'config/issuers',
    fields: { default: f.string().describe('Issuer id, name, or "default" to make the default').optional() },
    synopsis: 'The default issuer.',
    operations: {
      read: { summary: 'The default issuer id.', handler: async () => ({ data: { default: await store.defaultIssuerId() } }) },
      update: {
        summary: 'Set the default issuer.',
        handler: async (req) =>
          store.issuerConfig.lock(async () => {
            if (req.data.default === undefined || req.data.default === '') throw badRequest('field "default": missing required field');
            const i = await resolveIssuer(store, req.data.default, 'default');
            await store.issuerConfig.put({ default: i.id });
            return { data: { default: i.id } };
          }),
      },
    },
  });

  return [configCa, configIssuers, importIssuer, listIssuers, issuerPublicKey, issuer, publicKey];
}
