/**
 * Input checks of the expiration manager: everything in a lease ends up in storage keys or
 * in a response, so every id, path, namespace and token key is bounded and key-safe before it
 * is used, and bad input answers 400 naming the field. Error text that reaches a lease body or
 * a report is user-safe (a StrongroomError's message, scrubbed by contract) and bounded.
 */
import { badRequest, StrongroomError } from '@strongroom/sdk-plugin/host';
import { z } from 'zod';
import { isKeySafe, isRootNamespace } from './lease-entry.js';

const REASON_MAX = 240;

const keySafeOrEmpty = (max: number) => z.string().max(max).refine((s) => s === '' || isKeySafe(s), 'must be key-safe');

export const leaseIdSchema = z.string().min(1, 'lease_id is required').max(4096);
export const registerSchema = z.object({
  mountPath: z.string().min(1).max(1024).regex(/^[^/].*\/$/, 'must end with / and not start with /'),
  mountUuid: z.string().min(1).max(128),
  namespaceId: keySafeOrEmpty(64),
  requestPath: z.string().max(4096),
  tokenKey: keySafeOrEmpty(256),
  secret: z.object({
    type: z.string().max(256),
    ttl: z.number().finite(),
    maxTtl: z.number().finite(),
    renewable: z.boolean(),
    internalData: z.record(z.string(), z.unknown()),
  }),
});

export const tokenLeaseSchema = z.object({
  tokenKey: z.string().regex(/^[0-9a-f]{64}$/, 'must be a token key'),
  path: z.string().min(1).max(4096),
  namespaceId: keySafeOrEmpty(64),
  mountPath: z.string().min(1).max(1024).regex(/^[^/].*\/$/, 'must end with / and not start with /'),
  mountUuid: z.string().min(1).max(128).refine(isKeySafe, 'must be key-safe'),
  issueTime: z.number().finite(),
  expireTime: z.number().finite().positive(),
  lastRenewalTime: z.number().finite().nullable(),
  ttl: z.number().finite().nonnegative(),
  renewable: z.boolean(),
});

export function parseOr400<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${field}.${issue.path.join('.')}` : field;
  throw badRequest(`invalid ${where}: ${issue?.message ?? 'invalid value'}`);
}

/** A namespace id goes into storage keys: root ('' or 'root') or key-safe, nothing else. */
export function namespaceParam(namespaceId: unknown): string {
  const ns = parseOr400(keySafeOrEmpty(64), namespaceId, 'namespace');
  return isRootNamespace(ns) ? '' : ns;
}

/** User-safe error text: StrongroomError messages are scrubbed by contract, anything else is not shown. */
export function errorText(err: unknown): string {
  const text = err instanceof StrongroomError ? err.message : 'internal error';
  return text.length > REASON_MAX ? text.slice(0, REASON_MAX) : text;
}

export function isRetryable(err: unknown): boolean {
  return err instanceof StrongroomError ? err.retryable : true;
}
