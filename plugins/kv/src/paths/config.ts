import { definePath, f, formatGoDuration, type PathDef } from '@strongroom/sdk-plugin';
import type { KvStore } from '../store.js';

export function configPath(store: KvStore): PathDef {
  return definePath({
    pattern: 'config',
    fields: {
      max_versions: f.int({ min: 0 }).describe('Versions kept per key; 0 means the default of 10').optional(),
      cas_required: f.bool().describe('Require the cas option on every data write').optional(),
      delete_version_after: f.duration().describe('Delete versions this long after they are written; 0 disables').optional(),
    },
    operations: {
      read: {
        summary: 'Read the backend-wide settings',
        handler: async () => {
          const c = await store.getConfig();
          return { data: { cas_required: c.cas_required, delete_version_after: formatGoDuration(c.delete_version_after), max_versions: c.max_versions } };
        },
      },
      update: {
        summary: 'Configure the backend-wide settings',
        handler: async (req) => {
          const c = { ...(await store.getConfig()) };
          if (req.data.max_versions !== undefined) c.max_versions = req.data.max_versions;
          if (req.data.cas_required !== undefined) c.cas_required = req.data.cas_required;
          if (req.data.delete_version_after !== undefined) c.delete_version_after = req.data.delete_version_after;
          await store.putConfig(c);
        },
      },
    },
    synopsis: CONFIG_SYN,
    description: CONFIG_DESC,
  });
}

const CONFIG_SYN = 'Configure backend-wide key-value settings.';
const CONFIG_DESC = `Settings that apply to every key of this mount unless the key's own metadata
overrides them: \`max_versions\`, \`cas_required\` and \`delete_version_after\`.
Only the fields sent are changed.`;
