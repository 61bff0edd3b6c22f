/** sys/audit(/:path) and sys/audit-hash/:path (Vault's documented API). */
import { f } from '@strongroom/sdk-plugin/host';
import { defineSysPath, type SysPathDef } from './sys-path.js';
import type { SysDeps } from './deps.js';

export function auditPaths(deps: SysDeps): SysPathDef[] {
  const list = defineSysPath({
    rootOnly: true,
    pattern: 'audit',
    synopsis: 'List the enabled audit devices.',
    operations: {
      read: {
        summary: 'Audit devices by path.',
        handler: async () => {
          const data: Record<string, unknown> = {};
          for (const d of deps.audit.list()) data[d.path] = { type: d.type, description: d.description, options: d.options, local: d.local, path: d.path };
          return { data };
        },
      },
    },
  });
  const one = defineSysPath({
    rootOnly: true,
    pattern: 'audit/*path',
    fields: {
      path: f.string().describe('Path of the audit device.'),
      type: f.string().optional().describe('Device type: file, socket or syslog.'),
      description: f.string().optional(),
      options: f.map(f.string()).optional().describe('Device options. file: file_path ("stdout" and "discard" are special); socket: address, socket_type (tcp, udp, unix), write_timeout; syslog: facility, tag, address.'),
      local: f.bool().optional(),
    },
    synopsis: 'Enable or disable an audit device.',
    operations: {
      update: {
        summary: 'Enable an audit device.',
        handler: async (req) => {
          await deps.audit.enable(req.data.path, req.data.type ?? '', (req.data.options as Record<string, string>) ?? {}, req.data.description ?? '', req.data.local ?? false);
          return null;
        },
      },
      delete: {
        summary: 'Disable an audit device.',
        handler: async (req) => {
          await deps.audit.disable(req.data.path);
          return null;
        },
      },
    },
  });
  const hash = defineSysPath({
    rootOnly: true,
    pattern: 'audit-hash/*path',
    fields: { path: f.string(), input: f.sensitive(f.string().describe('The value to hash.')) },
    synopsis: 'Hash a value with an audit device\'s HMAC key, to find it in the log.',
    operations: {
      update: { summary: 'Hash the input.', handler: async (req) => ({ data: { hash: deps.audit.hash(req.data.path, req.data.input) } }) },
    },
  });
  return [list, one, hash];
}
