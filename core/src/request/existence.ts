/**
 * A write is a `create` when the engine's existence check finds nothing at
 * the path and an `update` otherwise, and a policy may grant one without the
 * other. What matters to the core is whether the answer can change the
 * authorisation (issue 20):
 *  - neither is allowed: refused at once, the engine is never asked;
 *  - both are allowed, with the same sudo: the answer cannot change the
 *    outcome, so the request may go in one round trip with the engine picking
 *    the operation itself (LogicalRequest.resolveExistence);
 *  - they differ: the core must ask first and authorise what the answer says.
 */
import type { AclDecision } from './ports.js';

export type WritePlan = { kind: 'deny' } | { kind: 'either'; sudo: boolean } | { kind: 'ask' };

export function planWrite(create: AclDecision, update: AclDecision): WritePlan {
  if (!create.allowed && !update.allowed) return { kind: 'deny' };
  if (create.allowed && update.allowed && create.sudo === update.sudo) return { kind: 'either', sudo: create.sudo };
  return { kind: 'ask' };
}
