/**
 * Identity templates of the `_template` role flags, as Vault documents them
 * (`{{identity.entity.id}}`, `{{identity.entity.name}}`,
 * `{{identity.entity.metadata.<key>}}`, `{{identity.entity.aliases.<mount
 * accessor>.name}}` and `.metadata.<key>`).
 *
 * Security invariant: a template resolves only from what the core vouches
 * for, never from the calling token's `meta` or display name, which whoever
 * calls auth/token/create chooses (issue 26, finding 1). Strongroom has no
 * identity store yet, so an entity's name and metadata never resolve; an
 * alias resolves from the login that issued the token (or its parent), as
 * the core records it. A template that cannot be resolved refuses the
 * request, as Vault makes such a principal invalid.
 */
import type { LoginAlias } from '@strongroom/sdk-plugin';

export interface Identity {
  /** The caller's entity id ('' while there is no identity store). */
  entityId: string;
  /** The login alias the core recorded with the caller's token. */
  alias?: LoginAlias;
}

const TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g;

export const hasTemplate = (s: string): boolean => /\{\{.+?\}\}/.test(s);

/** Thrown when a template names something the caller's identity does not have. */
export class TemplateError extends Error {}

function resolve(expr: string, id: Identity): string {
  const parts = expr.split('.');
  if (parts[0] !== 'identity' || parts[1] !== 'entity') throw new TemplateError(`unsupported template "${expr}"`);
  const rest = parts.slice(2);
  if (rest[0] === 'aliases' && rest.length >= 3) {
    const accessor = rest[1] as string;
    const alias = id.alias;
    if (!alias || alias.mountAccessor !== accessor) throw new TemplateError(`the caller has no alias on the auth mount with accessor "${accessor}"`);
    if (rest.length === 3 && rest[2] === 'name') return alias.name;
    if (rest[2] === 'metadata' && rest.length > 3) {
      const key = rest.slice(3).join('.');
      const v = alias.metadata[key];
      if (v === undefined) throw new TemplateError(`the caller's alias has no metadata "${key}"`);
      return v;
    }
    throw new TemplateError(`unsupported template "${expr}"`);
  }
  if (rest.length === 1 && rest[0] === 'id') {
    if (!id.entityId) throw new TemplateError('the caller has no identity entity');
    return id.entityId;
  }
  if ((rest.length === 1 && rest[0] === 'name') || (rest[0] === 'metadata' && rest.length > 1)) {
    // Entity names and metadata are written by identity administrators into an identity store, which does not exist yet.
    throw new TemplateError('the caller has no identity entity (entity names and metadata come only from an identity store)');
  }
  throw new TemplateError(`unsupported template "${expr}"`);
}

/** Renders every `{{...}}` of `tpl`; throws TemplateError when one cannot be. */
export function renderIdentityTemplate(tpl: string, id: Identity): string {
  return tpl.replace(TEMPLATE, (_m, expr: string) => resolve(expr, id));
}
