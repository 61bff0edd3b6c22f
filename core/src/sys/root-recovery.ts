/**
 * The root recovery ceremonies over HTTP, in two forms:
 * - Vault's sys/generate-root/{attempt,update} and sys/rekey/{init,update,verify}:
 *   unauthenticated (the operators' key shares are the credential), answered
 *   as plain JSON objects outside the envelope. Anyone who reaches them can
 *   start or cancel an attempt, so a listener can refuse them
 *   (`disable_unauthed_generate_root_endpoints`,
 *   `disable_unauthed_rekey_endpoints`, OpenBao's listener switches).
 * - OpenBao's authenticated forms, sys/generate-root-token/{attempt,update}
 *   and sys/rotate/root/{init,update,verify}: the same ceremonies behind a token
 *   with `sudo` on the path, answered in the envelope (`data`), as OpenBao's
 *   API client reads them. Served on every listener.
 * With a static seal, generate-root takes the recovery key shares, sys/rekey
 * is refused (the unseal key is the seal's), and Vault's
 * sys/rekey-recovery-key/{init,update,verify} rekey the recovery keys
 * (unauthenticated like sys/rekey, and refused with it by
 * `disable_unauthed_rekey_endpoints`).
 * And sys/rekey/backup (a token with sudo, as in Vault): backups are of
 * PGP-encrypted shares, which are not made here, so there is never one.
 */
import { StrongroomError, badRequest, f, type LogicalResponse } from '@strongroom/sdk-plugin/host';
import type { ApiRequest } from '../http/types.js';
import type { createGenerateRoot, createRekey } from '../seal/root-recovery.js';
import { defineSysPath, type SysPathDef } from './sys-path.js';

/** `rekeyRecovery`: the rekey of a static seal's recovery keys (Vault's sys/rekey-recovery-key/*). */
type Ceremonies = { generateRoot: ReturnType<typeof createGenerateRoot>; rekey: ReturnType<typeof createRekey>; rekeyRecovery: ReturnType<typeof createRekey> };
type Answer = (body: object) => LogicalResponse;

const flat: Answer = (body) => ({ raw: { status: 200, contentType: 'application/json', body: JSON.stringify(body) } });
const enveloped: Answer = (body) => ({ data: { ...body } });

/** The sys/ paths (relative to the mount) of the authenticated forms: they need sudo (sys/backend.ts). */
export const AUTHENTICATED_ROOT_RECOVERY_PATHS = ['generate-root-token/*', 'rotate/root/*'];

export function rootRecoveryPaths(deps: Ceremonies): SysPathDef[] {
  return [
    ...ceremonyPaths(deps, { generateRoot: 'generate-root/attempt', generateRootUpdate: 'generate-root/update', rekey: 'rekey/init', rekeyUpdate: 'rekey/update', rekeyVerify: 'rekey/verify' }, { unauthenticated: true, answer: flat }),
    ...ceremonyPaths(deps, { generateRoot: 'generate-root-token/attempt', generateRootUpdate: 'generate-root-token/update', rekey: 'rotate/root/init', rekeyUpdate: 'rotate/root/update', rekeyVerify: 'rotate/root/verify' }, { unauthenticated: false, answer: enveloped }),
    ...rekeyPaths(deps.rekeyRecovery, { rekey: 'rekey-recovery-key/init', rekeyUpdate: 'rekey-recovery-key/update', rekeyVerify: 'rekey-recovery-key/verify' }, { unauthenticated: true, answer: flat }, 'recovery'),
    defineSysPath({
      rootOnly: true,
      pattern: 'rekey/backup',
      synopsis: 'The backup of a rekey\'s PGP-encrypted shares (a token with sudo): PGP is not supported, so there is none.',
      operations: {
        read: {
          summary: 'Read the backed-up shares.',
          handler: async () => {
            throw badRequest('no backed-up keys found');
          },
        },
        delete: { summary: 'Delete the backed-up shares.', handler: async () => null },
      },
    }),
  ];
}

function ceremonyPaths(
  deps: Ceremonies,
  at: { generateRoot: string; generateRootUpdate: string; rekey: string; rekeyUpdate: string; rekeyVerify: string },
  how: { unauthenticated: boolean; answer: Answer },
): SysPathDef[] {
  const { generateRoot, rekey } = deps;
  const { answer, unauthenticated } = how;
  const who = unauthenticated ? ' (unauthenticated: the key shares are the credential)' : ' (a token with sudo on the path)';
  const shareFields = {
    key: f.sensitive(f.string().optional().describe('One unseal key share, or with a static seal one recovery key share (hex or base64).')),
    nonce: f.string().optional().describe('The nonce of the attempt.'),
  };
  return [
    defineSysPath({
      rootOnly: true,
      pattern: at.generateRoot,
      unauthenticated,
      fields: {
        otp: f.sensitive(f.string().optional().describe('A 28-character one-time password; generated and returned when omitted.')),
        pgp_key: f.string().optional().describe('Not supported.'),
      },
      synopsis: `Start, read or cancel a root token generation${who}.`,
      operations: {
        read: { summary: 'Progress of the root generation.', handler: async () => answer(await generateRoot.status()) },
        update: { summary: 'Start a root generation (returns the OTP once).', handler: async (req) => answer(await generateRoot.start(req.data)) },
        delete: { summary: 'Cancel the root generation.', handler: async () => (await generateRoot.cancel(), null) },
      },
    }),
    defineSysPath({
      rootOnly: true,
      pattern: at.generateRootUpdate,
      unauthenticated,
      fields: shareFields,
      synopsis: `Give one unseal key share to the root generation${who}.`,
      operations: { update: { summary: 'Add a share; at the threshold the encoded root token is returned.', handler: async (req) => answer(await generateRoot.update(req.data)) } },
    }),
    ...rekeyPaths(rekey, at, how, 'unseal'),
  ];
}

/** A rekey's three paths; `keys` names the shares rekeyed (the unseal keys, or the recovery keys). */
function rekeyPaths(
  rekey: ReturnType<typeof createRekey>,
  at: { rekey: string; rekeyUpdate: string; rekeyVerify: string },
  how: { unauthenticated: boolean; answer: Answer },
  keys: 'unseal' | 'recovery',
): SysPathDef[] {
  const { answer, unauthenticated } = how;
  const who = unauthenticated ? ' (unauthenticated: the key shares are the credential)' : ' (a token with sudo on the path)';
  const shareFields = {
    key: f.sensitive(f.string().optional().describe(`One ${keys} key share (hex or base64).`)),
    nonce: f.string().optional().describe('The nonce of the attempt.'),
  };
  const of = keys === 'recovery' ? ' of the recovery keys' : '';
  return [
    defineSysPath({
      rootOnly: true,
      pattern: at.rekey,
      unauthenticated,
      fields: {
        secret_shares: f.any().optional().describe('Number of new shares.'),
        secret_threshold: f.any().optional().describe('Shares needed to unseal with the new key.'),
        pgp_keys: f.any().optional().describe('Not supported.'),
        backup: f.any().optional().describe('Not supported (it backs up PGP-encrypted shares).'),
        require_verification: f.any().optional().describe('The new shares take effect only once the threshold of them is given back at the verify path.'),
      },
      synopsis: `Start, read or cancel a rekey${of}${who}.`,
      operations: {
        read: { summary: 'Progress of the rekey.', handler: async () => answer(await rekey.status()) },
        update: { summary: 'Start a rekey with the new shares and threshold.', handler: async (req) => answer(await rekey.start(req.data as Record<string, unknown>)) },
        delete: { summary: 'Cancel the rekey.', handler: async () => (await rekey.cancel(), null) },
      },
    }),
    defineSysPath({
      rootOnly: true,
      pattern: at.rekeyUpdate,
      unauthenticated,
      fields: shareFields,
      synopsis: `Give one current ${keys} key share to the rekey${who}.`,
      operations: { update: { summary: 'Add a share; at the threshold the new shares are returned.', handler: async (req) => answer(await rekey.update(req.data)) } },
    }),
    defineSysPath({
      rootOnly: true,
      pattern: at.rekeyVerify,
      unauthenticated,
      fields: shareFields,
      synopsis: `Verify a rekey's new ${keys} key shares before they take effect${who}.`,
      operations: {
        read: { summary: 'Progress of the verification.', handler: async () => answer(await rekey.verifyStatus()) },
        update: { summary: `Give one new share (with the verification nonce); at the new threshold the new ${keys} key takes effect.`, handler: async (req) => answer(await rekey.verify(req.data)) },
        delete: { summary: 'Restart the verification: a new nonce, no progress (the rekey stays).', handler: async () => answer(await rekey.verifyRestart()) },
      },
    }),
  ];
}

/**
 * A listener's refusal of the unauthenticated forms, applied to each request
 * it takes before anything else (before forwarding too, so a standby's switch
 * holds whatever the active node's listener allows). The root namespace's
 * sys/ is the only one with these paths, so the joined path decides; case and
 * anything after the ceremony's name are ignored, so no spelling gets past.
 * Null when the listener serves both.
 */
export function unauthedRootRecoveryGate(listener: { disableUnauthedGenerateRootEndpoints?: boolean; disableUnauthedRekeyEndpoints?: boolean }): ((req: Pick<ApiRequest, 'path'>) => void) | null {
  const closed: Array<[RegExp, string]> = [];
  if (listener.disableUnauthedGenerateRootEndpoints) closed.push([/^sys\/generate-root(\/|$)/i, 'generate-root is disabled on this listener (disable_unauthed_generate_root_endpoints): use sys/generate-root-token/ with a sudo token']);
  if (listener.disableUnauthedRekeyEndpoints) closed.push([/^sys\/rekey(-recovery-key)?(\/|$)/i, 'rekey is disabled on this listener (disable_unauthed_rekey_endpoints): use sys/rotate/root/ with a sudo token']);
  if (closed.length === 0) return null;
  return (req) => {
    for (const [re, why] of closed) if (re.test(req.path)) throw new StrongroomError('unsupported_operation', `unauthenticated ${why}`);
  };
}
