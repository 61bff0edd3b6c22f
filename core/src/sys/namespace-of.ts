import { badRequest, type MountInfo } from '@strongroom/sdk-plugin/host';
import type { Namespace } from '../namespace/namespaces.js';
import type { SysDeps } from './deps.js';

/** The namespace a sys/ request was made in (each namespace has its own sys/ mount). */
export function namespaceOf(deps: Pick<SysDeps, 'namespaces'>, mount: MountInfo): Namespace {
  const ns = deps.namespaces.byPath(mount.namespace);
  if (!ns) throw badRequest(`namespace "${mount.namespace}" does not exist`);
  return ns;
}
