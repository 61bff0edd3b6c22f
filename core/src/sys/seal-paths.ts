/**
 * sys/init, sys/unseal, sys/seal-status and sys/health answer while sealed,
 * so core/src/server/core.ts serves them before any routing. They are
 * declared here only so that `?help=1` and the OpenAPI document describe
 * them like every other path; a request never reaches these handlers.
 */
import { StrongroomError, definePath, f, type PathDef } from '@strongroom/sdk-plugin/host';

const servedBeforeRouting = async (): Promise<never> => {
  throw new StrongroomError('internal', 'this path is served before routing');
};

export function sealPaths(): PathDef[] {
  return [
    definePath({
      pattern: 'init',
      unauthenticated: true,
      fields: {
        secret_shares: f.int({ min: 1, max: 255 }).optional().describe('Number of unseal key shares.'),
        secret_threshold: f.int({ min: 1, max: 255 }).optional().describe('Shares needed to unseal.'),
      },
      synopsis: 'Initialize the server (answers while sealed).',
      operations: {
        read: { summary: 'Whether the server is initialized.', handler: servedBeforeRouting },
        update: { summary: 'Initialize: returns the key shares and the first root token.', handler: servedBeforeRouting },
      },
    }),
    definePath({
      pattern: 'unseal',
      unauthenticated: true,
      fields: {
        key: f.sensitive(f.string().optional().describe('One unseal key share (hex or base64).')),
        reset: f.bool().optional().describe('Discard the shares given so far.'),
      },
      synopsis: 'Give one unseal key share (answers while sealed).',
      operations: { update: { summary: 'Unseal progress.', handler: servedBeforeRouting } },
    }),
    definePath({
      pattern: 'seal-status',
      unauthenticated: true,
      synopsis: 'Seal status (answers while sealed).',
      operations: { read: { summary: 'Seal status.', handler: servedBeforeRouting } },
    }),
    definePath({
      pattern: 'health',
      unauthenticated: true,
      fields: {
        standbyok: f.query(f.bool().optional()),
        activecode: f.query(f.int().optional()),
        sealedcode: f.query(f.int().optional()),
        uninitcode: f.query(f.int().optional()),
      },
      synopsis: 'Health of this node (answers while sealed).',
      operations: { read: { summary: 'Health.', handler: servedBeforeRouting } },
    }),
  ];
}
