/**
 * sys/wrapping/{wrap,unwrap,lookup,rewrap}, as Vault documents them. The
 * wrapping token comes in the body (`token`) or, when the body has none, as
 * the request's own token. Unwrap answers the wrapped response exactly as it
 * was, so a client reads it as if it had made the original request.
 */
import { badRequest, f, type HandlerRequest } from '@strongroom/sdk-plugin/host';
import { defineSysPath, type SysPathDef } from './sys-path.js';
import type { InProcessRequest } from '../request/ports.js';
import type { TokenEntry } from '../token/index.js';
import { DEFAULT_WRAP_TTL, type ResponseWrapping } from '../wrapping/response-wrapping.js';

export function wrappingPaths(deps: { wrapping: ResponseWrapping }): SysPathDef[] {
  const { wrapping } = deps;

  /** The token to act on, and its entry when it is the caller's own (its use already taken by the request). */
  const target = (req: HandlerRequest<{ token?: string | undefined }>): { token: string; used?: TokenEntry } => {
    const body = req.data.token;
    if (body) return { token: body };
    const own = req.raw.clientToken;
    if (!own) throw badRequest('token: missing required parameter');
    const entry = (req.raw as InProcessRequest).callerEntry;
    return entry ? { token: own, used: entry } : { token: own };
  };
  const tokenField = { token: f.sensitive(f.string().optional().describe('The wrapping token; the request token when omitted.')) };

  return [
    defineSysPath({
      rootOnly: false,
      pattern: 'wrapping/wrap',
      fields: {},
      synopsis: 'Wrap the request body in a single-use wrapping token.',
      operations: {
        update: {
          summary: 'Wrap arbitrary data (an empty object too, as in Vault); the TTL is the wrap TTL header (5 minutes when absent).',
          handler: async (req) => {
            const ttl = (req.raw as InProcessRequest).wrapTtl ?? DEFAULT_WRAP_TTL;
            const response = { request_id: req.raw.id, lease_id: '', renewable: false, lease_duration: 0, data: { ...req.raw.data }, wrap_info: null, warnings: null, auth: null };
            const nsId = ((req.raw as InProcessRequest).callerEntry)?.namespaceId ?? 'root';
            return { wrapInfo: { ...(await wrapping.wrap(response, { ttl, path: 'sys/wrapping/wrap', namespaceId: nsId })) } };
          },
        },
      },
    }),
    defineSysPath({
      rootOnly: false,
      pattern: 'wrapping/unwrap',
      fields: tokenField,
      synopsis: 'Return the wrapped response and invalidate the wrapping token.',
      operations: {
        update: {
          summary: 'Unwrap.',
          handler: async (req) => {
            const { token, used } = target(req);
            const response = await wrapping.unwrap(token, used);
            return { raw: { status: 200, contentType: 'application/json', body: JSON.stringify({ ...response, request_id: req.raw.id }) } };
          },
        },
      },
    }),
    defineSysPath({
      rootOnly: false,
      pattern: 'wrapping/lookup',
      fields: tokenField,
      unauthenticated: true,
      synopsis: 'Creation properties of a wrapping token; does not use it.',
      operations: {
        update: {
          summary: 'Look up a wrapping token.',
          handler: async (req) => ({ data: { ...(await wrapping.lookup(target(req).token)) } }),
        },
        read: {
          summary: 'Look up a wrapping token (token in the query).',
          handler: async (req) => ({ data: { ...(await wrapping.lookup(target(req).token)) } }),
        },
      },
    }),
    defineSysPath({
      rootOnly: false,
      pattern: 'wrapping/rewrap',
      fields: tokenField,
      synopsis: 'Move a wrapped response to a new wrapping token with the same TTL.',
      operations: {
        update: {
          summary: 'Rewrap.',
          handler: async (req) => {
            const { token, used } = target(req);
            return { wrapInfo: { ...(await wrapping.rewrap(token, used)) } };
          },
        },
      },
    }),
  ];
}
