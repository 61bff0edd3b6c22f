/**
 * The token auth method at auth/token/ (Vault's documented API), an
 * in-process backend on the SDK framework over the token store. Token ids
 * arrive in bodies (never in URLs, which end up in logs) and are marked
 * sensitive so the audit log HMACs them.
 */
import { badRequest, defineBackend, definePath, notFound, paginate, permissionDenied, type BackendFactory, type HandlerRequest, type PathDef } from '@strongroom/sdk-plugin/host';
import {
  accessorBodySchema,
  createTokenSchema,
  renewAccessorSchema,
  renewSchema,
  renewSelfSchema,
  roleNameSchema,
  roleSchema,
  toCreateTokenRequest,
  toRoleInput,
  tokenBodySchema,
  type TokenEntry,
  type TokenStore,
} from '../token/index.js';
import { isWithinNamespace, type NamespaceRegistry } from '../namespace/namespaces.js';
import type { InProcessRequest } from '../request/ports.js';
import { accessorNamespaceId } from '../token/ids.js';

export interface TokenAuthDeps {
  tokens: TokenStore;
  namespaces: Pick<NamespaceRegistry, 'byId' | 'byPath'>;
}

export function createTokenAuthBackend(deps: TokenAuthDeps): BackendFactory {
  const { tokens } = deps;

  async function caller(req: HandlerRequest<unknown>): Promise<{ entry: TokenEntry; id: string }> {
    const id = req.raw.clientToken;
    // The pipeline already looked the token up (and may have taken its last use).
    const entry = ((req.raw as InProcessRequest).callerEntry) ?? (id ? await tokens.lookup(id) : null);
    if (!id || !entry) throw permissionDenied();
    return { entry, id };
  }

  /** The id of the namespace this token mount serves: roles and accessors are per namespace. */
  const nsOf = (req: { mount: { namespace: string } }) => deps.namespaces.byPath(req.mount.namespace)?.id ?? 'root';

  /**
   * Whether an accessor may be acted on from this request: only when its token
   * belongs to the request's namespace or one below it. Decided from the
   * accessor itself, before any lookup, and answered exactly as an unknown
   * accessor is, so another namespace's tokens can be neither reached nor told apart.
   */
  const reachable = (req: { mount: { namespace: string } }, accessor: string) => {
    const here = deps.namespaces.byPath(req.mount.namespace);
    return here !== undefined && isWithinNamespace(deps.namespaces, here, accessorNamespaceId(accessor));
  };
  const byAccessor = async (req: { mount: { namespace: string } }, accessor: string) => (reachable(req, accessor) ? tokens.lookupByAccessor(accessor) : null);

  const lookupOrFail = async (token: string) => {
    const e = await tokens.lookup(token);
    if (!e) throw badRequest('bad token');
    return e;
  };

  const create = (pattern: string, kind: 'create' | 'orphan' | 'role'): PathDef =>
    definePath({
      pattern,
      fields: { ...createTokenSchema.shape, ...(kind === 'role' ? { role_name: roleNameSchema.describe('Name of the token role.') } : {}) },
      synopsis: kind === 'orphan' ? 'Create an orphan token.' : kind === 'role' ? 'Create a token from a role.' : 'Create a token.',
      operations: {
        update: {
          summary: 'Create a token; the response carries it in `auth`.',
          handler: async (req) => {
            const { entry: parent } = await caller(req);
            const created = await tokens.create(
              parent,
              toCreateTokenRequest(req.data, {
                orphanEndpoint: kind === 'orphan',
                ...(kind === 'role' ? { roleName: String(req.data.role_name) } : {}),
                // Vault's rule: root, or sudo on the path called, may create orphans and tokens beyond the caller's policies.
                callerHasSudo: parent.policies.includes('root') || (req.raw as InProcessRequest).callerSudo === true,
                namespaceId: nsOf(req),
              }),
            );
            return { warnings: created.warnings, renderedAuth: tokens.authBlock(created.entry, created.id) };
          },
        },
      },
    });

  const paths: PathDef[] = [
    create('create-orphan', 'orphan'),
    create('create/:role_name', 'role'),
    create('create', 'create'),
    definePath({
      pattern: 'lookup',
      fields: { token: tokenBodySchema.shape.token.optional() },
      synopsis: 'Look up a token.',
      operations: {
        update: {
          summary: 'Properties of the token in the body.',
          handler: async (req) => {
            if (!req.data.token) throw badRequest('token: missing token');
            // 403 as in Vault, whose clients check for it (hvac raises Forbidden).
            const e = await tokens.lookup(req.data.token);
            if (!e) throw permissionDenied('bad token');
            return { data: tokens.lookupResponse(e, req.data.token) };
          },
        },
        read: {
          summary: 'Properties of the calling token.',
          handler: async (req) => {
            const { entry, id } = await caller(req);
            return { data: tokens.lookupResponse(entry, id) };
          },
        },
      },
    }),
    definePath({
      pattern: 'lookup-self',
      synopsis: 'Look up the calling token.',
      operations: {
        read: { summary: 'Properties of the calling token.', handler: async (req) => lookupSelf(req) },
        update: { summary: 'Properties of the calling token.', handler: async (req) => lookupSelf(req) },
      },
    }),
    definePath({
      pattern: 'lookup-accessor',
      fields: accessorBodySchema.shape,
      synopsis: 'Look up a token by its accessor.',
      operations: {
        update: {
          summary: 'Properties of the token (without its id).',
          handler: async (req) => {
            const e = await byAccessor(req, req.data.accessor);
            if (!e) throw permissionDenied('invalid accessor');
            return { data: tokens.lookupResponse(e) };
          },
        },
      },
    }),
    definePath({
      pattern: 'renew',
      fields: renewSchema.shape,
      synopsis: 'Renew a token.',
      operations: {
        update: {
          summary: 'Renew the token in the body.',
          handler: async (req) => renewReply(await lookupOrFail(req.data.token), req.data.token, req.data.increment ?? 0),
        },
      },
    }),
    definePath({
      pattern: 'renew-self',
      fields: renewSelfSchema.shape,
      synopsis: 'Renew the calling token.',
      operations: {
        update: {
          summary: 'Renew the calling token.',
          handler: async (req) => {
            const { entry, id } = await caller(req);
            return renewReply(entry, id, req.data.increment ?? 0);
          },
        },
      },
    }),
    definePath({
      pattern: 'renew-accessor',
      fields: renewAccessorSchema.shape,
      synopsis: 'Renew a token by accessor.',
      operations: {
        update: {
          summary: 'Renew the token with this accessor.',
          handler: async (req) => {
            const e = await byAccessor(req, req.data.accessor);
            if (!e) throw badRequest('invalid accessor');
            const { entry, warnings } = await tokens.renew(e, req.data.increment ?? 0);
            const auth = tokens.authBlock(entry, '');
            return { warnings, renderedAuth: { ...auth, client_token: '' } };
          },
        },
      },
    }),
    definePath({
      pattern: 'revoke',
      fields: tokenBodySchema.shape,
      synopsis: 'Revoke a token and its children.',
      operations: { update: { summary: 'Revoke.', handler: async (req) => (await tokens.revoke(req.data.token), null) } },
    }),
    definePath({
      pattern: 'revoke-self',
      synopsis: 'Revoke the calling token and its children.',
      operations: {
        update: {
          summary: 'Revoke self.',
          handler: async (req) => {
            const { id } = await caller(req);
            await tokens.revoke(id);
            return null;
          },
        },
      },
    }),
    definePath({
      pattern: 'revoke-accessor',
      fields: accessorBodySchema.shape,
      synopsis: 'Revoke a token by accessor.',
      operations: {
        update: {
          summary: 'Revoke by accessor.',
          // Out of reach: nothing happens, and the answer is an unknown accessor's.
          handler: async (req) => (reachable(req, req.data.accessor) && (await tokens.revokeAccessor(req.data.accessor)), null),
        },
      },
    }),
    definePath({
      pattern: 'revoke-orphan',
      fields: tokenBodySchema.shape,
      synopsis: 'Revoke a token, leaving its children as orphans (sudo).',
      operations: { update: { summary: 'Revoke orphan.', handler: async (req) => (await tokens.revokeOrphan(req.data.token), null) } },
    }),
    definePath({
      pattern: 'accessors/',
      synopsis: 'List token accessors (sudo).',
      operations: {
        list: {
          summary: 'Every accessor.',
          handler: async (req) => ({ data: { keys: paginate((await tokens.listAccessors(nsOf(req))).sort(), req.list.after, req.list.limit) } }),
        },
      },
    }),
    definePath({
      pattern: 'roles/',
      synopsis: 'List token roles.',
      operations: {
        list: { summary: 'Role names.', handler: async (req) => ({ data: { keys: paginate((await tokens.listRoles(nsOf(req))).sort(), req.list.after, req.list.limit) } }) },
      },
    }),
    definePath({
      pattern: 'roles/:role_name',
      fields: { role_name: roleSchema.shape.path_suffix.unwrap().describe('Name of the role.'), ...roleSchema.shape },
      synopsis: 'Token roles: presets for auth/token/create/:role_name.',
      existenceCheck: async (req) => (await tokens.readRole(req.data.role_name, nsOf(req))) !== null,
      operations: {
        read: {
          summary: 'Read a role.',
          handler: async (req) => {
            const r = await tokens.readRole(req.data.role_name, nsOf(req));
            if (!r) throw notFound(`role "${req.data.role_name}" not found`);
            return { data: tokens.roleResponse(r) };
          },
        },
        update: {
          summary: 'Create or update a role.',
          handler: async (req) => {
            const { role_name, ...rest } = req.data;
            await tokens.writeRole(role_name, toRoleInput(rest), nsOf(req));
            return null;
          },
        },
        delete: { summary: 'Delete a role.', handler: async (req) => (await tokens.deleteRole(req.data.role_name, nsOf(req)), null) },
      },
    }),
    definePath({
      pattern: 'tidy',
      synopsis: 'Clean up dangling accessors, parent links and expired tokens.',
      operations: {
        update: {
          summary: 'Tidy the token store.',
          handler: async () => {
            const r = await tokens.tidy();
            return { warnings: [`Tidy operation successfully started: revoked ${r.revoked}, removed ${r.accessorsRemoved} accessors and ${r.parentLinksRemoved} parent links.`] };
          },
        },
      },
    }),
  ];

  async function lookupSelf(req: HandlerRequest<unknown>) {
    const { entry, id } = await caller(req);
    return { data: tokens.lookupResponse(entry, id) };
  }

  async function renewReply(e: TokenEntry, id: string, increment: number) {
    const { entry, warnings } = await tokens.renew(e, increment);
    return { warnings, renderedAuth: tokens.authBlock(entry, id) };
  }

  return defineBackend({
    type: 'auth',
    help: 'The token auth method: create, look up, renew and revoke tokens; token roles.',
    paths,
    specialPaths: { root: ['revoke-orphan', 'accessors/', 'accessors/*'] },
  });
}
