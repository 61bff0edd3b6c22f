/**
 * Response wrapping (Vault's cubbyhole response wrapping): a response asked
 * for with `X-Service-Wrap-TTL` / `X-Vault-Wrap-TTL` is kept here and the
 * caller gets only a single-use wrapping token (`wrap_info`).
 *
 * What must stay true:
 * - the wrapped response is kept, as in Vault, in the wrapping token's own
 *   cubbyhole (`cubbyhole/response`), so behind the barrier under the HMAC of
 *   the token (never the token itself), where no other token can read it;
 * - it is handed out at most once: the token's single use is taken under the
 *   token store's lock before the entry is read, and the entry is deleted with
 *   the token (unwrap, expiry or revocation all destroy its cubbyhole);
 * - the wrapped response never reaches a log or an audit entry: audit sees
 *   `wrap_info` only.
 */
import { badRequest, parseDuration, FieldParseError, StrongroomError } from '@strongroom/sdk-plugin/host';
import type { Cubbyholes } from '../cubbyhole/cubbyholes.js';
import { invalidWrappingToken } from '../request/ports.js';
import type { Physical } from '../storage/physical.js';
import { RESPONSE_WRAPPING_POLICY_NAME } from '../policy/policy.js';
import type { TokenEntry, TokenStore } from '../token/index.js';

/** The wrapped response's key in the wrapping token's cubbyhole (Vault's). */
const RESPONSE_KEY = 'response';
/** Where a server before issue 27 kept wrapped responses (by token HMAC); still read and deleted. */
const LEGACY_PREFIX = 'sys/wrapped/';
/** sys/wrapping/wrap without a wrap TTL header: Vault's default of five minutes. */
export const DEFAULT_WRAP_TTL = 300;

export interface WrapInfo {
  token: string;
  accessor: string;
  ttl: number;
  creation_time: string;
  creation_path: string;
  /** Accessor of the token the wrapped response created (login, token create). */
  wrapped_accessor?: string;
}

interface WrappedEntry {
  response: Record<string, unknown>;
  creation_time: string;
  creation_ttl: number;
  creation_path: string;
  wrapped_accessor: string;
}

export interface WrapOptions {
  ttl: number;
  /** Namespace-relative request path that produced the response. */
  path: string;
  namespaceId: string;
  wrappedAccessor?: string;
}

export interface ResponseWrapping {
  /** The wrap TTL header's value in seconds; null when absent; a 400 when malformed, not positive or above the max. */
  parseTtl(header: string | undefined): number | null;
  wrap(response: Record<string, unknown>, opts: WrapOptions): Promise<WrapInfo>;
  /** Creation properties of a live wrapping token; does not use it. */
  lookup(token: string): Promise<{ creation_ttl: number; creation_time: string; creation_path: string }>;
  /**
   * The wrapped response, once. `used` is the token's entry when the caller
   * already took its single use (the token came in the request header).
   */
  unwrap(token: string, used?: TokenEntry): Promise<Record<string, unknown>>;
  /** Moves a wrapped response to a fresh wrapping token with the same TTL; the old token stops working. */
  rewrap(token: string, used?: TokenEntry): Promise<WrapInfo>;
  /** Drops what a server before issue 27 kept outside the cubbyhole for a revoked or expired wrapping token. */
  forgetLegacy(tokenKey: string): Promise<void>;
  /** Whether a token entry is a wrapping token. */
  isWrappingToken(entry: TokenEntry): boolean;
}

export interface ResponseWrappingDeps {
  cubbyholes: Pick<Cubbyholes, 'inNamespace'>;
  /** The barrier, for entries a server before issue 27 wrote at `sys/wrapped/`. */
  legacy: Pick<Physical, 'get' | 'delete'>;
  tokens: Pick<TokenStore, 'createWrapping' | 'lookup' | 'useToken' | 'revokeEntry'>;
  /** Longest wrap TTL accepted, seconds (the system max lease TTL). */
  maxTtl: number;
  now?: () => Date;
}

export function createResponseWrapping(deps: ResponseWrappingDeps): ResponseWrapping {
  const { cubbyholes, legacy, tokens } = deps;
  const now = deps.now ?? (() => new Date());
  const encode = (e: WrappedEntry) => Buffer.from(JSON.stringify(e), 'utf8');

  const isWrappingToken = (e: TokenEntry) => e.policies.length === 1 && e.policies[0] === RESPONSE_WRAPPING_POLICY_NAME;

  async function live(token: string): Promise<TokenEntry> {
    if (typeof token !== 'string' || token === '') throw badRequest('token: missing required parameter');
    const e = await tokens.lookup(token);
    if (!e || !isWrappingToken(e)) throw invalidWrappingToken();
    return e;
  }

  /** The wrapping token's cubbyhole, in the namespace it was made in. */
  function cubbyholeOf(entry: Pick<TokenEntry, 'key' | 'namespaceId'>) {
    const box = cubbyholes.inNamespace(entry.namespaceId, entry.key);
    if (!box) throw new StrongroomError('unavailable', 'the cubbyhole mount is not available');
    return box;
  }

  async function read(entry: TokenEntry): Promise<WrappedEntry> {
    const raw = (await cubbyholeOf(entry).get(RESPONSE_KEY)) ?? (await legacy.get(LEGACY_PREFIX + entry.key));
    if (raw === null) throw invalidWrappingToken();
    return JSON.parse(Buffer.from(raw).toString('utf8')) as WrappedEntry;
  }

  /** Takes the token's single use (unless the caller did) and returns its entry, then revokes the token. */
  async function consume(token: string, used: TokenEntry | undefined): Promise<{ wrapped: WrappedEntry; entry: TokenEntry }> {
    let entry: TokenEntry;
    if (used) {
      if (!isWrappingToken(used)) throw invalidWrappingToken();
      entry = used;
    } else {
      const e = await live(token);
      const taken = await tokens.useToken(e);
      if (!taken) throw invalidWrappingToken();
      entry = taken.entry;
    }
    try {
      return { wrapped: await read(entry), entry };
    } finally {
      // Revoking the token destroys its cubbyhole (the token store's revocation hook).
      await tokens.revokeEntry(entry);
    }
  }

  async function wrap(response: Record<string, unknown>, opts: WrapOptions): Promise<WrapInfo> {
    const created = await tokens.createWrapping({ ttl: opts.ttl, path: opts.path, namespaceId: opts.namespaceId });
    const creationTime = now().toISOString();
    const entry: WrappedEntry = {
      response,
      creation_time: creationTime,
      creation_ttl: opts.ttl,
      creation_path: opts.path,
      wrapped_accessor: opts.wrappedAccessor ?? '',
    };
    try {
      await cubbyholeOf(created.entry).put(RESPONSE_KEY, encode(entry));
    } catch (err) {
      await tokens.revokeEntry(created.entry).catch(() => undefined);
      throw err;
    }
    return {
      token: created.id,
      accessor: created.entry.accessor,
      ttl: opts.ttl,
      creation_time: creationTime,
      creation_path: opts.path,
      ...(entry.wrapped_accessor ? { wrapped_accessor: entry.wrapped_accessor } : {}),
    };
  }

  return {
    isWrappingToken,
    parseTtl(header) {
      if (header === undefined || header.trim() === '') return null;
      let ttl: number;
      try {
        ttl = parseDuration(header.trim());
      } catch (err) {
        if (err instanceof FieldParseError) throw badRequest(`X-Vault-Wrap-TTL: invalid wrap TTL "${header}"`);
        throw err;
      }
      if (!Number.isFinite(ttl) || ttl <= 0) throw badRequest('X-Vault-Wrap-TTL: the wrap TTL must be positive');
      if (ttl > deps.maxTtl) throw badRequest(`X-Vault-Wrap-TTL: the wrap TTL of ${ttl}s is longer than the maximum of ${deps.maxTtl}s`);
      return Math.floor(ttl);
    },
    wrap,
    async lookup(token) {
      const e = await live(token);
      const w = await read(e);
      return { creation_ttl: w.creation_ttl, creation_time: w.creation_time, creation_path: w.creation_path };
    },
    async unwrap(token, used) {
      return (await consume(token, used)).wrapped.response;
    },
    async rewrap(token, used) {
      const { wrapped: old, entry } = await consume(token, used);
      return wrap(old.response, {
        ttl: old.creation_ttl,
        path: old.creation_path,
        namespaceId: entry.namespaceId,
        ...(old.wrapped_accessor ? { wrappedAccessor: old.wrapped_accessor } : {}),
      });
    },
    async forgetLegacy(tokenKey) {
      await legacy.delete(LEGACY_PREFIX + tokenKey);
    },
  };
}
