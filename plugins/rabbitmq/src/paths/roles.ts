/**
 * Roles: roles/:name and roles/ (list, paginated with after/limit).
 *
 * vhosts and vhost_topics are JSON documents (a string, as Vault takes them,
 * or the object itself): validated at write, so a typo is a 400 naming the
 * field here rather than a failure on every creds request. A read answers them
 * as they were sent.
 */
import { z } from 'zod';
import { badRequest, definePath, f, scanStorage, type PathDef } from '@strongroom/sdk-plugin';
import type { EngineDeps } from '../deps.js';
import type { TopicPermissions, VhostPermissions } from '../management-client.js';
import type { Role } from '../store.js';

const jsonDocument = () => z.union([z.string(), z.record(z.string(), z.unknown())]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON object from a string or an object; "" is none. */
function document(field: string, raw: string | Record<string, unknown> | undefined, shape: string): { text: string; value: Record<string, unknown> } {
  if (raw === undefined || raw === '') return { text: '', value: {} };
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch (err) {
      throw badRequest(`${field}: invalid JSON (${(err as Error).message})`);
    }
  }
  if (!isObject(value)) throw badRequest(`${field}: must be a JSON object ${shape}`);
  return { text: typeof raw === 'string' ? raw : JSON.stringify(raw), value };
}

/** Checks one permission object: only `keys`, each a string (a missing one grants nothing: ""). */
function patterns<K extends string>(field: string, where: string, v: unknown, keys: readonly K[]): Record<K, string> {
  if (!isObject(v)) throw badRequest(`${field}: ${where} must be an object with ${keys.join(', ')} patterns`);
  const out = {} as Record<K, string>;
  for (const k of Object.keys(v)) {
    if (!(keys as readonly string[]).includes(k)) throw badRequest(`${field}: ${where} has unknown key "${k}" (expected ${keys.join(', ')})`);
  }
  for (const k of keys) {
    const p = v[k];
    if (p !== undefined && typeof p !== 'string') throw badRequest(`${field}: ${where}.${k} must be a string pattern`);
    out[k] = p ?? '';
  }
  return out;
}

function parseVhosts(raw: string | Record<string, unknown> | undefined): { text: string; value: Record<string, VhostPermissions> } {
  const doc = document('vhosts', raw, 'mapping each virtual host to {"configure", "write", "read"} patterns');
  const value: Record<string, VhostPermissions> = {};
  for (const [vhost, p] of Object.entries(doc.value)) value[vhost] = patterns('vhosts', `vhost "${vhost}"`, p, ['configure', 'write', 'read'] as const);
  return { text: doc.text, value };
}

function parseVhostTopics(raw: string | Record<string, unknown> | undefined): { text: string; value: Record<string, Record<string, TopicPermissions>> } {
  const doc = document('vhost_topics', raw, 'mapping each virtual host to exchanges and their {"write", "read"} patterns');
  const value: Record<string, Record<string, TopicPermissions>> = {};
  for (const [vhost, exchanges] of Object.entries(doc.value)) {
    if (!isObject(exchanges)) throw badRequest(`vhost_topics: vhost "${vhost}" must map exchanges to {"write", "read"} patterns`);
    const perVhost: Record<string, TopicPermissions> = {};
    for (const [exchange, p] of Object.entries(exchanges)) {
      perVhost[exchange] = patterns('vhost_topics', `vhost "${vhost}" exchange "${exchange}"`, p, ['write', 'read'] as const);
    }
    value[vhost] = perVhost;
  }
  return { text: doc.text, value };
}

export function rolePaths(deps: EngineDeps): PathDef[] {
  const { store } = deps;

  const list = definePath({
    pattern: 'roles',
    synopsis: 'List the roles.',
    operations: {
      list: {
        summary: 'Names of the roles (after, limit paginate).',
        handler: () => store.roles.list(),
      },
      scan: { summary: 'Every name below the path (any depth), as SCAN pages it.', handler: scanStorage(store.roles.prefix) },
    },
  });

  const role = definePath({
    pattern: 'roles/:name',
    fields: {
      name: f.string().describe('Role name'),
      tags: f.commaList().describe('Management tags of issued users (list or comma-separated)').optional(),
      vhosts: jsonDocument().describe('JSON map of virtual host to {"configure", "write", "read"} patterns').optional(),
      vhost_topics: jsonDocument().describe('JSON map of virtual host to exchange to {"write", "read"} topic patterns (RabbitMQ 3.7.0 or later)').optional(),
    },
    synopsis: 'Manage a role: the tags and permissions of the users its credentials create.',
    description: ROLE_HELP,
    existenceCheck: async (req) => (await store.roles.view(req.data.name)) !== null,
    operations: {
      read: {
        summary: 'Read a role.',
        handler: async (req) => {
          const r = await store.roles.view(req.data.name);
          return r ? { data: { tags: r.tags, vhosts: r.vhosts, vhost_topics: r.vhost_topics } } : null;
        },
      },
      // As in Vault, a write replaces the whole role.
      create: { summary: 'Create a role.', handler: (req) => write(req.data) },
      update: { summary: 'Replace a role.', handler: (req) => write(req.data) },
      delete: {
        summary: 'Delete a role (credentials already issued stay revocable).',
        handler: async (req) => {
          await store.roles.delete(req.data.name);
          return null;
        },
      },
    },
  });

  const write = async (d: { name: string; tags?: string[] | undefined; vhosts?: string | Record<string, unknown> | undefined; vhost_topics?: string | Record<string, unknown> | undefined }) => {
    const tags = (d.tags ?? []).map((t) => t.trim()).filter(Boolean);
    const vhosts = parseVhosts(d.vhosts);
    const topics = parseVhostTopics(d.vhost_topics);
    if (tags.length === 0 && Object.keys(vhosts.value).length === 0) throw badRequest('tags, vhosts: at least one of them must be set');
    const r: Role = {
      name: d.name,
      tags: tags.join(','),
      vhosts: vhosts.text,
      vhost_topics: topics.text,
      vhostPermissions: vhosts.value,
      topicPermissions: topics.value,
    };
    await store.roles.put(r.name, r);
    return null;
  };

  return [list, role];
}

const ROLE_HELP = `A role defines the RabbitMQ user that each creds/<role> request creates:
tags (comma-separated management tags, e.g. "management,monitoring"), vhosts
(a JSON map of virtual host to {"configure", "write", "read"} regular
expressions) and vhost_topics (a JSON map of virtual host to exchange to
{"write", "read"} regular expressions; RabbitMQ 3.7.0 or later). A missing
pattern grants nothing. At least tags or vhosts must be set. Example:

    vhosts='{"/": {"configure": "^app\\\\.", "write": "^app\\\\.", "read": "^app\\\\."}}'
    vhost_topics='{"/": {"amq.topic": {"write": "^orders\\\\.", "read": ".*"}}}'`;
