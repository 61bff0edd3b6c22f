/**
 * Identity templates of the `_template` role flags, as Vault documents them
 * (`{{identity.entity.id}}`, `{{identity.entity.name}}`,
 * `{{identity.entity.metadata.<key>}}`, `{{identity.entity.aliases.<mount
 * accessor>.name}}` and `.metadata.<key>`). Strongroom has no identity store
 * yet, so the entity is the calling token: its entity id, its display name and
 * its metadata (an approle token carries `role_name`).
 */

export interface Identity {
  displayName: string;
  entityId: string;
  metadata: Record<string, string>;
}

const TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g;

export const hasTemplate = (s: string): boolean => /\{\{.+?\}\}/.test(s);

/** Thrown when a template names something the token does not have. */
export class TemplateError extends Error {}

function resolve(expr: string, id: Identity): string {
  const parts = expr.split('.');
  if (parts[0] !== 'identity' || parts[1] !== 'entity') throw new TemplateError(`unsupported template "${expr}"`);
  const rest = parts.slice(2);
  const metadata = (key: string) => {
    const v = id.metadata[key];
    if (v === undefined) throw new TemplateError(`the token has no metadata "${key}"`);
    return v;
  };
  if (rest.length === 1 && rest[0] === 'id') {
    if (!id.entityId) throw new TemplateError('the token has no entity');
    return id.entityId;
  }
  if (rest.length === 1 && rest[0] === 'name') return id.displayName;
  if (rest.length === 2 && rest[0] === 'metadata') return metadata(rest[1] as string);
  // aliases.<mount accessor>.name / .metadata.<key>: the token's own login is its one alias.
  if (rest[0] === 'aliases' && rest.length === 3 && rest[2] === 'name') return id.displayName;
  if (rest[0] === 'aliases' && rest.length === 4 && rest[2] === 'metadata') return metadata(rest[3] as string);
  throw new TemplateError(`unsupported template "${expr}"`);
}

/** Renders every `{{...}}` of `tpl`; throws TemplateError when one cannot be. */
export function renderIdentityTemplate(tpl: string, id: Identity): string {
  return tpl.replace(TEMPLATE, (_m, expr: string) => resolve(expr, id));
}
