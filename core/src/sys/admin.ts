/** sys/seal, sys/step-down, sys/rotate, sys/key-status, sys/metrics, sys/loggers and sys/tools (sys/leader is node-local: seal-paths.ts). */
import { badRequest, f, hashToolPath, randomToolPath } from '@strongroom/sdk-plugin/host';
import { defineSysPath, scoped, type SysPathDef } from './sys-path.js';
import { LEVELS, type LogLevel } from '../log/logger.js';
import type { SysDeps } from './deps.js';

export function adminPaths(deps: SysDeps): SysPathDef[] {
  return [
    // The same endpoints as transit's hash and random (one definition, in the SDK).
    ...scoped(false, [hashToolPath('tools/hash{/:algorithm}'), randomToolPath('tools/random{/:source}{/:urlbytes}')]),
    defineSysPath({
      rootOnly: true,
      pattern: 'seal',
      synopsis: 'Seal the server: every key is dropped from memory.',
      operations: { update: { summary: 'Seal.', handler: async () => (await deps.seal(), null) } },
    }),
    defineSysPath({
      rootOnly: true,
      pattern: 'step-down',
      synopsis: 'Give up the active role: another node of an HA cluster takes over (single node: no effect).',
      operations: { update: { summary: 'Step down.', handler: async () => (await deps.stepDown(), null) } },
    }),
    defineSysPath({
      rootOnly: true,
      pattern: 'rotate',
      synopsis: 'Add a new keyring term; new writes use it, old entries stay readable.',
      operations: { update: { summary: 'Rotate the encryption key.', handler: async () => (await deps.rotate(), null) } },
    }),
    defineSysPath({
      rootOnly: true,
      pattern: 'key-status',
      synopsis: 'The active keyring term.',
      operations: { read: { summary: 'Key status.', handler: async () => ({ data: deps.keyStatus() }) } },
    }),
    defineSysPath({
      rootOnly: true,
      pattern: 'metrics',
      fields: { format: f.query(f.string().optional().describe('"prometheus" for the text format; JSON otherwise.')) },
      synopsis: 'Telemetry of this node.',
      operations: {
        read: {
          summary: 'Metrics.',
          handler: async (req) => {
            if (req.data.format === 'prometheus') {
              // Vault's meaning of a zero retention: the Prometheus format is off.
              if (deps.prometheusRetentionTime <= 0) throw badRequest('prometheus is not enabled: set telemetry { prometheus_retention_time } above 0');
              return { raw: { status: 200, contentType: deps.metrics.contentType, body: await deps.metrics.render() } };
            }
            if (req.data.format !== undefined && req.data.format !== '' && req.data.format !== 'json') throw badRequest('format: must be "prometheus" or absent (JSON)');
            return { data: { metrics: await deps.metrics.json() } };
          },
        },
      },
    }),
    ...loggerPaths(deps),
  ];
}

const levelField = f.string().optional().describe('trace, debug, info, warn or error.');

function parseLevel(v: unknown): LogLevel {
  const l = typeof v === 'string' ? v.trim().toLowerCase() : '';
  if (!Object.hasOwn(LEVELS, l)) throw badRequest(`level: must be one of ${Object.keys(LEVELS).join(', ')}`);
  return l as LogLevel;
}

/** Vault's sys/loggers: read the levels, change the base level or one named logger's at run time, revert. */
function loggerPaths(deps: SysDeps): SysPathDef[] {
  const view = () => {
    const { base, named } = deps.logger.levels();
    return { data: { base, ...named } };
  };
  return [
    defineSysPath({
      rootOnly: true,
      pattern: 'loggers',
      fields: { level: levelField },
      synopsis: 'Log levels of the server, changed at run time.',
      operations: {
        read: { summary: 'The base level and each named logger\'s level.', handler: async () => view() },
        update: {
          summary: 'Set the level of every logger.',
          handler: async (req) => {
            const level = parseLevel(req.data.level);
            deps.logger.setLevel(level);
            for (const name of Object.keys(deps.logger.levels().named)) deps.logger.setNamedLevel(name, null);
            return null;
          },
        },
        delete: { summary: 'Revert every logger to the configured level.', handler: async () => (deps.logger.resetLevels(), null) },
      },
    }),
    defineSysPath({
      rootOnly: true,
      pattern: 'loggers/:name',
      fields: { name: f.string().describe('A named logger (sys/loggers lists them).'), level: levelField },
      synopsis: 'Log level of one named logger.',
      operations: {
        read: {
          summary: 'The level of one logger.',
          handler: async (req) => {
            const named = deps.logger.levels().named;
            if (!Object.hasOwn(named, req.data.name)) throw badRequest(`name: no logger named "${req.data.name}"`);
            return { data: { [req.data.name]: named[req.data.name] } };
          },
        },
        update: {
          summary: 'Set the level of one logger.',
          handler: async (req) => {
            if (!Object.hasOwn(deps.logger.levels().named, req.data.name)) throw badRequest(`name: no logger named "${req.data.name}"`);
            deps.logger.setNamedLevel(req.data.name, parseLevel(req.data.level));
            return null;
          },
        },
        delete: {
          summary: 'Revert one logger to the base level.',
          handler: async (req) => {
            if (!Object.hasOwn(deps.logger.levels().named, req.data.name)) throw badRequest(`name: no logger named "${req.data.name}"`);
            deps.logger.setNamedLevel(req.data.name, null);
            return null;
          },
        },
      },
    }),
  ];
}
