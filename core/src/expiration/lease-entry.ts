/**
 * The persisted lease and its storage keys.
 *
 * Security invariants kept here:
 * - Storage keys never hold a secret: bodies live at `sys/expire/id/<ns>/<lease id>`
 *   (a lease id is a mount path, a request path and a random part, none secret), and the
 *   token index at `sys/expire-token/<tokenKey>/<sha256(lease id)>`, where tokenKey is the
 *   caller's HMAC of the token, never the token itself.
 * - A lease body keeps the engine's internal data (needed to revoke) but never the
 *   response data handed to the client; the barrier encrypts the value.
 *
 * A stored body is the entry as JSON. Bodies written by earlier versions start with a restore
 * header line (`[expireTime, irrevocable, mountUuid, mountPath, namespaceId]\n`) that restore
 * no longer needs (it reads the due index); they still read.
 *
 * Two kinds of lease share this shape, as OpenBao's leases do: a secret an engine handed out
 * (revoked by the engine), and a service token's expiry (`kind: 'token'`, id
 * `<token path>/<tokenKey>[.<ns>]`, revoked by the token store). A token lease is never in
 * the token index: it is the token's own, not one the token owns.
 *
 * The due index: beside each body, an empty-valued key that names what restore needs,
 *   sys/expire/due/<lease id>/<expireTime>,<irrevocable 0|1>,<mount path length>,<mount uuid>[,<quota role>]
 * written in the same atomic batch as every body write. Restore on unseal (a million leases)
 * iterates these keys alone and decrypts nothing (DESIGN §leases). Keys are plain text, so
 * the index holds nothing the lease id does not already show but the expire time, the
 * mount uuid and, for a lease counted under a lease-count quota's role, that role's name
 * (base64url; a role name is no secret: ACL paths name it), so restore rebuilds the counts. Its integrity is not trusted: a timer-driven revocation reads the body (which
 * the barrier authenticates) and reschedules when the body says the lease is not due yet, so
 * an edited or stale key can delay a revocation (as deleting a body always could) but never
 * make one early.
 */
import { createHash } from 'node:crypto';
import { badRequest } from '@strongroom/sdk-plugin/host';
import { z } from 'zod';
import type { PhysicalOp } from '../storage/physical.js';
import { randomBase62 } from '@strongroom/sdk-plugin/host';

export const LEASE_BODY_PREFIX = 'sys/expire/id/';
export const TOKEN_INDEX_PREFIX = 'sys/expire-token/';
export const DUE_INDEX_PREFIX = 'sys/expire/due/';
/** The random part of a secret's lease id: 24 base62 characters (~142 bits). */
const LEASE_ID_RANDOM_LENGTH = 24;
/** Storage segment for the root namespace (namespace ids are base62, so no clash). */
const ROOT_NS_SEGMENT = 'root';

/** Namespace ids, token keys and mount uuids end up in storage keys: keep them to a safe alphabet. */
const keySafe = /^[A-Za-z0-9_-]+$/;

export const leaseEntrySchema = z.object({
  v: z.literal(1),
  /** Absent: a secret lease. */
  kind: z.literal('token').optional(),
  leaseId: z.string().min(1),
  mountPath: z.string(),
  mountUuid: z.string(),
  namespaceId: z.string(),
  requestPath: z.string(),
  secretType: z.string(),
  internalData: z.record(z.string(), z.unknown()),
  tokenKey: z.string(),
  /** Unix milliseconds. */
  issueTime: z.number(),
  expireTime: z.number(),
  lastRenewalTime: z.number().nullable(),
  renewable: z.boolean(),
  /** Seconds: the TTL granted at issue or at the last renewal. */
  ttl: z.number(),
  /** Seconds from issueTime, already capped by the mount and system max at issue. */
  maxTtl: z.number(),
  revokeAttempts: z.number().int().nonnegative(),
  /** Why the lease is irrevocable (truncated error text); null while revocable. */
  irrevocableReason: z.string().nullable(),
  /** The login role a lease-count quota counted the lease under (a rule naming a role); absent: none. */
  quotaRole: z.string().min(1).optional(),
});

export type LeaseEntry = z.infer<typeof leaseEntrySchema>;

export function isRootNamespace(namespaceId: string): boolean {
  return namespaceId === '' || namespaceId === ROOT_NS_SEGMENT;
}

export function isKeySafe(s: string): boolean {
  return keySafe.test(s);
}

/**
 * The namespace id carried by a lease id (`.<ns-id>` after the random part), '' for root.
 * The core must compare it with the request's namespace before acting on a lease id.
 */
export function namespaceOfLeaseId(leaseId: string): string {
  // The last '.' is the suffix's only when no '/' follows it (restore calls this a million times: no slice of the last segment).
  const dot = leaseId.lastIndexOf('.');
  return dot === -1 || leaseId.indexOf('/', dot) !== -1 ? '' : leaseId.slice(dot + 1);
}

function nsSegment(namespaceId: string): string {
  return isRootNamespace(namespaceId) ? ROOT_NS_SEGMENT : namespaceId;
}

export function leaseBodyKey(leaseId: string): string {
  return `${LEASE_BODY_PREFIX}${nsSegment(namespaceOfLeaseId(leaseId))}/${leaseId}`;
}

/** Folder of lease bodies under a lease-id prefix inside one namespace. */
export function leaseBodyFolder(namespaceId: string, prefix: string): string {
  return `${LEASE_BODY_PREFIX}${nsSegment(namespaceId)}/${prefix}`;
}

export function tokenIndexFolder(tokenKey: string): string {
  return `${TOKEN_INDEX_PREFIX}${tokenKey}/`;
}

function tokenIndexKey(tokenKey: string, leaseId: string): string {
  return `${tokenIndexFolder(tokenKey)}${createHash('sha256').update(leaseId).digest('hex').slice(0, 32)}`;
}

/** Lease id from a body key, or null when the key is not shaped like one. */
export function leaseIdFromBodyKey(key: string): string | null {
  if (!key.startsWith(LEASE_BODY_PREFIX)) return null;
  const rest = key.slice(LEASE_BODY_PREFIX.length);
  const slash = rest.indexOf('/');
  return slash === -1 ? null : rest.slice(slash + 1);
}

/** A token's lease id (Vault's): `<token path>/<tokenKey>` plus `.<ns-id>` outside the root namespace. */
export function tokenLeaseId(path: string, tokenKey: string, namespaceId: string): string {
  const base = `${path.replace(/\/+$/, '')}/${tokenKey}`;
  return isRootNamespace(namespaceId) ? base : `${base}.${namespaceId}`;
}

/** A token's lease as the token store describes it (see TokenLease in types.ts). */
export interface TokenLeaseFields {
  tokenKey: string;
  path: string;
  namespaceId: string;
  mountPath: string;
  mountUuid: string;
  issueTime: number;
  expireTime: number;
  lastRenewalTime: number | null;
  ttl: number;
  renewable: boolean;
}

/** The stored body of a token's lease; its id must fall under its mount path (the due index relies on it). */
export function tokenLeaseEntry(l: TokenLeaseFields): LeaseEntry {
  const namespaceId = isRootNamespace(l.namespaceId) ? '' : l.namespaceId;
  const leaseId = tokenLeaseId(l.path, l.tokenKey, namespaceId);
  if (!leaseId.startsWith(l.mountPath)) throw badRequest('invalid token lease: its path is not under its mount path');
  return {
    v: 1,
    kind: 'token',
    leaseId,
    mountPath: l.mountPath,
    mountUuid: l.mountUuid,
    namespaceId,
    requestPath: l.path.slice(l.mountPath.length),
    secretType: 'token',
    internalData: {},
    tokenKey: l.tokenKey,
    issueTime: l.issueTime,
    expireTime: l.expireTime,
    lastRenewalTime: l.lastRenewalTime,
    renewable: l.renewable,
    ttl: l.ttl,
    maxTtl: 0,
    revokeAttempts: 0,
    irrevocableReason: null,
  };
}

/** `<mount path><request path>/<random>` plus `.<ns-id>` outside the root namespace. */
export function makeLeaseId(mountPath: string, requestPath: string, namespaceId: string): string {
  const path = requestPath.replace(/^\/+|\/+$/g, '');
  const base = `${mountPath}${path === '' ? '' : `${path}/`}${randomBase62(LEASE_ID_RANDOM_LENGTH)}`;
  return isRootNamespace(namespaceId) ? base : `${base}.${namespaceId}`;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const OPEN_BRACKET = 0x5b;

function encodeEntry(entry: LeaseEntry): Uint8Array {
  return encoder.encode(JSON.stringify(entry));
}

/** The entry's JSON text: after an earlier version's header line, or the whole body. */
function entryJson(bytes: Uint8Array): string {
  const text = decoder.decode(bytes);
  return bytes[0] === OPEN_BRACKET ? text.slice(text.indexOf('\n') + 1) : text;
}

/** Parses and validates a stored body; null when it is corrupt (the caller logs, never the bytes). */
export function decodeEntry(bytes: Uint8Array): LeaseEntry | null {
  let raw: unknown;
  try {
    raw = JSON.parse(entryJson(bytes));
  } catch {
    return null;
  }
  const parsed = leaseEntrySchema.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

const EMPTY = new Uint8Array(0);

/** The due-index key of a lease in this state (the lease id starts with its mount path by construction). */
export function dueIndexKey(entry: Pick<LeaseEntry, 'leaseId' | 'expireTime' | 'irrevocableReason' | 'mountPath' | 'mountUuid' | 'quotaRole'>): string {
  const role = entry.quotaRole ? `,${Buffer.from(entry.quotaRole, 'utf8').toString('base64url')}` : '';
  return `${DUE_INDEX_PREFIX}${entry.leaseId}/${entry.expireTime},${entry.irrevocableReason === null ? 0 : 1},${entry.mountPath.length},${entry.mountUuid}${role}`;
}

/** Every due-index key of one lease sits under this folder (a stale one included). */
export function dueIndexFolder(leaseId: string): string {
  return `${DUE_INDEX_PREFIX}${leaseId}/`;
}

export interface DueIndexItem {
  leaseId: string;
  expireTime: number;
  irrevocable: boolean;
  mountPath: string;
  mountUuid: string;
  namespaceId: string;
  quotaRole?: string;
}

/**
 * Parses a due-index key; null when it is not shaped like one. Restore runs this once a lease
 * on unseal, so it walks the key with indexOf rather than splitting it.
 */
export function parseDueIndexKey(key: string): DueIndexItem | null {
  if (!key.startsWith(DUE_INDEX_PREFIX)) return null;
  const slash = key.lastIndexOf('/');
  const idStart = DUE_INDEX_PREFIX.length;
  if (slash <= idStart) return null;
  // <expire>,<flag>,<path length>,<mount uuid>[,<role>]: commas at c1..c3 (and c4 before a role).
  const c1 = key.indexOf(',', slash + 1);
  const c2 = c1 === -1 ? -1 : key.indexOf(',', c1 + 1);
  const c3 = c2 === -1 ? -1 : key.indexOf(',', c2 + 1);
  if (c3 === -1) return null;
  const c4 = key.indexOf(',', c3 + 1);
  if (c4 !== -1 && key.indexOf(',', c4 + 1) !== -1) return null;
  const flag = key.charCodeAt(c1 + 1);
  if (c2 !== c1 + 2 || (flag !== 0x30 && flag !== 0x31) || c1 === slash + 1) return null;
  const expireTime = Number(key.slice(slash + 1, c1));
  const length = Number(key.slice(c2 + 1, c3));
  const idLength = slash - idStart;
  const mountUuid = c4 === -1 ? key.slice(c3 + 1) : key.slice(c3 + 1, c4);
  const role = c4 === -1 ? undefined : key.slice(c4 + 1);
  const ok =
    Number.isFinite(expireTime) &&
    Number.isInteger(length) &&
    length > 0 &&
    length < idLength &&
    isKeySafe(mountUuid) &&
    (role === undefined || (role !== '' && isKeySafe(role)));
  if (!ok) return null;
  const leaseId = key.slice(idStart, slash);
  const item: DueIndexItem = {
    leaseId,
    expireTime,
    irrevocable: flag === 0x31,
    mountPath: leaseId.slice(0, length),
    mountUuid,
    namespaceId: namespaceOfLeaseId(leaseId),
  };
  if (role !== undefined) {
    const quotaRole = Buffer.from(role, 'base64url').toString('utf8');
    if (quotaRole) item.quotaRole = quotaRole;
  }
  return item;
}

/** The writes that store a lease in its state: its body and due-index key, dropping the key of the state it leaves. */
export function leaseWriteOps(entry: LeaseEntry, previousDueKey: string | null): PhysicalOp[] {
  const dueKey = dueIndexKey(entry);
  const ops: PhysicalOp[] = [
    { type: 'put', key: leaseBodyKey(entry.leaseId), value: encodeEntry(entry) },
    { type: 'put', key: dueKey, value: EMPTY },
  ];
  if (previousDueKey !== null && previousDueKey !== dueKey) ops.push({ type: 'delete', key: previousDueKey });
  return ops;
}

/** Whether a token owns this lease (indexed under the token, revoked with it). */
const ownedByToken = (entry: LeaseEntry): boolean => entry.tokenKey !== '' && entry.kind !== 'token';

/** A new lease's writes: body, due-index key and, when a token owns it, the token index. */
export function newLeaseOps(entry: LeaseEntry): PhysicalOp[] {
  const ops = leaseWriteOps(entry, null);
  if (ownedByToken(entry)) ops.push({ type: 'put', key: tokenIndexKey(entry.tokenKey, entry.leaseId), value: encodeString(entry.leaseId) });
  return ops;
}

/** The writes that remove a lease: body, due-index key, token index. */
export function leaseDeleteOps(entry: LeaseEntry): PhysicalOp[] {
  const ops: PhysicalOp[] = [
    { type: 'delete', key: leaseBodyKey(entry.leaseId) },
    { type: 'delete', key: dueIndexKey(entry) },
  ];
  if (ownedByToken(entry)) ops.push({ type: 'delete', key: tokenIndexKey(entry.tokenKey, entry.leaseId) });
  return ops;
}

function encodeString(s: string): Uint8Array {
  return encoder.encode(s);
}

export function decodeString(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** The `sys/leases/lookup` data shape (Vault's field names, RFC 3339 times, remaining ttl). */
export interface LeaseLookup {
  id: string;
  issue_time: string;
  expire_time: string;
  last_renewal: string | null;
  renewable: boolean;
  ttl: number;
}

export function toLookup(entry: LeaseEntry, now: number): LeaseLookup {
  return {
    id: entry.leaseId,
    issue_time: new Date(entry.issueTime).toISOString(),
    expire_time: new Date(entry.expireTime).toISOString(),
    last_renewal: entry.lastRenewalTime === null ? null : new Date(entry.lastRenewalTime).toISOString(),
    renewable: entry.renewable && entry.irrevocableReason === null,
    ttl: Math.max(0, Math.floor((entry.expireTime - now) / 1000)),
  };
}
