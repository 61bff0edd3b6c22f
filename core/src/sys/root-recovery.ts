/**
 * sys/generate-root/{attempt,update} and sys/rekey/{init,update}, as Vault
 * documents them: unauthenticated (the operators' key shares are the
 * credential), answered as plain JSON objects outside the envelope.
 */
import { definePath, f, type LogicalResponse, type PathDef } from '@strongroom/sdk-plugin/host';
import type { createGenerateRoot, createRekey } from '../seal/root-recovery.js';

const json = (body: unknown): LogicalResponse => ({ raw: { status: 200, contentType: 'application/json', body: JSON.stringify(body) } });

export function rootRecoveryPaths(deps: { generateRoot: ReturnType<typeof createGenerateRoot>; rekey: ReturnType<typeof createRekey> }): PathDef[] {
  const { generateRoot, rekey } = deps;
  const shareFields = {
    key: f.sensitive(f.string().optional().describe('One unseal key share (hex or base64).')),
    nonce: f.string().optional().describe('The nonce of the attempt.'),
  };
  return [
    definePath({
      pattern: 'generate-root/attempt',
      unauthenticated: true,
      fields: {
        otp: f.sensitive(f.string().optional().describe('A 28-character one-time password; generated and returned when omitted.')),
        pgp_key: f.string().optional().describe('Not supported.'),
      },
      synopsis: 'Start, read or cancel a root token generation.',
      operations: {
        read: { summary: 'Progress of the root generation.', handler: async () => json(await generateRoot.status()) },
        update: { summary: 'Start a root generation (returns the OTP once).', handler: async (req) => json(await generateRoot.start(req.data)) },
        delete: { summary: 'Cancel the root generation.', handler: async () => (await generateRoot.cancel(), null) },
      },
    }),
    definePath({
      pattern: 'generate-root/update',
      unauthenticated: true,
      fields: shareFields,
      synopsis: 'Give one unseal key share to the root generation.',
      operations: { update: { summary: 'Add a share; at the threshold the encoded root token is returned.', handler: async (req) => json(await generateRoot.update(req.data)) } },
    }),
    definePath({
      pattern: 'rekey/init',
      unauthenticated: true,
      fields: {
        secret_shares: f.any().optional().describe('Number of new shares.'),
        secret_threshold: f.any().optional().describe('Shares needed to unseal with the new key.'),
        pgp_keys: f.any().optional().describe('Not supported.'),
        backup: f.any().optional().describe('Not supported.'),
        require_verification: f.any().optional().describe('Not supported.'),
      },
      synopsis: 'Start, read or cancel a rekey.',
      operations: {
        read: { summary: 'Progress of the rekey.', handler: async () => json(await rekey.status()) },
        update: { summary: 'Start a rekey with the new shares and threshold.', handler: async (req) => json(await rekey.start(req.data as Record<string, unknown>)) },
        delete: { summary: 'Cancel the rekey.', handler: async () => (await rekey.cancel(), null) },
      },
    }),
    definePath({
      pattern: 'rekey/update',
      unauthenticated: true,
      fields: shareFields,
      synopsis: 'Give one current unseal key share to the rekey.',
      operations: { update: { summary: 'Add a share; at the threshold the new shares are returned.', handler: async (req) => json(await rekey.update(req.data)) } },
    }),
  ];
}
