/**
 * A sys/ path declares where it exists. `rootOnly: true` marks a path of the
 * server as a whole (the seal and its state, keys, plugins, audit devices, HA,
 * metrics, loggers): it exists in the root namespace's sys/ only, as in Vault,
 * and a child namespace's sys/ answers 404 for it, so a tenant can never seal
 * the server. Every sys/ path must say (a path that forgot would otherwise
 * appear in every namespace): the type requires it, and the backend refuses a
 * path without it.
 */
import { definePath, type FieldMap, type PathDef, type PathSpec } from '@strongroom/sdk-plugin/host';

export interface SysPathDef extends PathDef {
  readonly rootOnly: boolean;
}

export function defineSysPath<F extends FieldMap>(spec: PathSpec<F> & { rootOnly: boolean }): SysPathDef {
  const { rootOnly, ...rest } = spec;
  return { ...definePath(rest as PathSpec<F>), rootOnly };
}

/** Declares paths built elsewhere (the SDK's tool paths, the lease endpoints) with where they exist. */
export function scoped(rootOnly: boolean, paths: readonly PathDef[]): SysPathDef[] {
  return paths.map((p) => ({ ...p, rootOnly }));
}
