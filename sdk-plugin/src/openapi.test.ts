import { defineBackend, definePath } from './define-backend.js';
import type { BackendDescription } from './describe.js';
import { f } from './fields.js';
import { createTestBackend } from './harness.js';
import { helpFor, toOpenApi } from './openapi.js';

const desc: BackendDescription = {
  help: 'Transit-like engine.',
  secretTypes: [],
  paths: [
    {
      pattern: 'keys/:name',
      fields: [
        { name: 'name', schema: { type: 'string' }, description: 'Key name', required: true, inPath: true },
        { name: 'type', schema: { type: 'string', default: 'aes256-gcm96' }, description: 'Key type', required: false },
      ],
      operations: [
        { operation: 'read', summary: 'Read a key' },
        { operation: 'create', summary: 'Create a key' },
        { operation: 'delete', summary: 'Delete a key' },
      ],
      existenceCheck: true,
      synopsis: 'Manage keys',
      description: 'Named keys.',
    },
    {
      pattern: 'keys/:name/rotate',
      fields: [{ name: 'name', schema: { type: 'string' }, description: 'Key name', required: true, inPath: true }],
      operations: [{ operation: 'update', summary: 'Rotate' }],
      existenceCheck: false,
      synopsis: 'Rotate a key',
      description: '',
    },
    {
      pattern: 'keys',
      fields: [],
      operations: [{ operation: 'list', summary: 'List keys' }],
      existenceCheck: false,
      synopsis: 'List keys',
      description: '',
    },
    {
      pattern: 'hash{/:algorithm}',
      fields: [
        { name: 'algorithm', schema: { type: 'string' }, description: 'Algorithm', required: false, inPath: true },
        { name: 'input', schema: { type: 'string' }, description: 'Input', required: true, sensitive: true },
      ],
      operations: [{ operation: 'update', summary: 'Hash' }],
      existenceCheck: false,
      synopsis: 'Hash data',
      description: '',
    },
  ],
};

describe('toOpenApi', () => {
  const doc = toOpenApi([{ prefix: 'transit/', description: desc }], { title: 'T', version: '1' });

  it('expands templates into OpenAPI paths with path parameters', () => {
    expect(Object.keys(doc.paths).sort()).toEqual(['/transit/hash', '/transit/hash/{algorithm}', '/transit/keys/', '/transit/keys/{name}', '/transit/keys/{name}/rotate']);
    const keys = doc.paths['/transit/keys/{name}']!;
    expect(keys.parameters).toEqual([{ name: 'name', in: 'path', required: true, description: 'Key name', schema: { type: 'string' } }]);
    expect(keys['x-vault-createSupported']).toBe(true);
    expect(Object.keys(keys).filter((k) => ['get', 'post', 'delete', 'patch'].includes(k)).sort()).toEqual(['delete', 'get', 'post']);
    expect(doc.paths['/transit/hash']!.parameters).toBeUndefined();
  });

  it('puts non-path fields in the request body and LIST under the directory path', () => {
    const post = doc.paths['/transit/hash/{algorithm}']!.post as { requestBody: { content: Record<string, { schema: unknown }> } };
    expect(post.requestBody.content['application/json']!.schema).toEqual({
      type: 'object',
      properties: { input: { type: 'string', description: 'Input', 'x-vault-displayAttrs': { sensitive: true } } },
      required: ['input'],
    });
    const list = doc.paths['/transit/keys/']!.get as { operationId: string; parameters: { name: string }[] };
    expect(list.operationId).toBe('list-transit-keys');
    expect(list.parameters.map((p) => p.name)).toEqual(['list', 'after', 'limit']);
  });
});

describe('toOpenApi: SCAN', () => {
  const path = (pattern: string, ops: string[]) => ({
    pattern,
    fields: pattern.includes(':') || pattern.includes('*') ? [{ name: pattern.replace(/^.*[:*]/, ''), schema: { type: 'string' }, description: 'Path', required: true, inPath: true }] : [],
    operations: ops.map((operation) => ({ operation, summary: `${operation} ${pattern}` })),
    existenceCheck: false,
    synopsis: pattern,
    description: '',
  });
  const scanDesc = { ...desc, paths: [path('roles', ['list', 'scan']), path('roles/:name', ['read', 'update']), path('*path', ['read', 'list', 'scan'])] } as BackendDescription;
  const doc = toOpenApi([{ prefix: 'eng/', description: scanDesc }]);
  type Op = { operationId: string; parameters: { name: string; required?: boolean; schema: unknown }[] };

  it('documents a scan as GET ?scan=true (required) with after and limit, beside the LIST on the directory path', () => {
    const scan = doc.paths['/eng/roles']!.get as Op;
    expect(scan.operationId).toBe('scan-eng-roles');
    expect(scan.parameters.map((p) => p.name)).toEqual(['scan', 'after', 'limit']);
    expect(scan.parameters[0]).toMatchObject({ required: true, schema: { type: 'string', enum: ['true'] } });
    expect((doc.paths['/eng/roles/']!.get as Op).operationId).toBe('list-eng-roles');
  });

  it('where a read holds the GET, gives the read an optional scan parameter (and after, limit)', () => {
    const read = doc.paths['/eng/{path}']!.get as Op;
    expect(read.operationId).toBe('read-eng-path');
    expect(read.parameters.map((p) => p.name)).toEqual(['scan', 'after', 'limit']);
    expect(read.parameters[0]!.required).toBeUndefined();
    expect((doc.paths['/eng/{path}/']!.get as Op).operationId).toBe('list-eng-path');
  });

  it('leaves a path without scan as it was', () => {
    expect(doc.paths['/eng/roles/{name}']!.get).toMatchObject({ operationId: 'read-eng-roles-name' });
    expect((doc.paths['/eng/roles/{name}']!.get as Partial<Op>).parameters).toBeUndefined();
  });
});

describe('helpFor', () => {
  it('documents the queried path and the paths below it, relative to it', () => {
    const h = helpFor(desc, 'keys/my-key');
    expect(Object.keys(h.openapi.paths).sort()).toEqual(['/', '/rotate']);
    // The captured name is fixed by the query, so it is no longer a parameter.
    expect(h.openapi.paths['/']!.parameters).toBeUndefined();
    expect(h.help).toContain('Matching Route: keys/:name');
    expect(h.help).toContain('Manage keys');
    expect(h.help).toContain('type (string)');
  });

  it('names what a lenient field means, not its wire type list, and prints no placeholder for a field without a description', async () => {
    const fields = {
      name: f.string(),
      shout: f.bool().default(false),
      count: f.int().describe('How many'),
      ttl: f.duration().describe('Lifetime').optional(),
      tags: f.commaList().optional(),
      ids: f.commaIntList().optional(),
      blob: f.sensitive(f.base64()).optional(),
      extra: f.map().optional(),
      mode: f.enum(['a', 'b']).default('a'),
    };
    const factory = defineBackend({ type: 'secret', help: 'h', paths: [definePath({ pattern: 'things/:name', fields, synopsis: 'Things.', operations: { read: { summary: 'Read', handler: async () => null } } })] });
    const t = await createTestBackend(factory);
    const help = (await t.help('things/x'))!.data!.help as string;
    expect(help.slice(help.indexOf('## PARAMETERS'))).toBe(
      [
        '## PARAMETERS',
        '',
        '    name (string, required, path)',
        '',
        '    shout (bool)',
        '',
        '    count (int, required)\n        How many',
        '',
        '    ttl (duration (sec))\n        Lifetime',
        '',
        '    tags (comma-separated list)',
        '',
        '    ids (comma-separated ints)',
        '',
        '    blob (base64, sensitive)',
        '',
        '    extra (map)',
        '',
        '    mode (string)',
      ].join('\n'),
    );
    // OpenAPI keeps the wire's type list beside the meaning.
    const schema = t.backend.describe().paths[0]!.fields.find((fd) => fd.name === 'shout')!.schema;
    expect(schema).toEqual({ type: ['boolean', 'number', 'string'], default: false, 'x-strongroom-type': 'bool' });
  });

  it('at the mount root, lists every path and gives the backend help', () => {
    const h = helpFor(desc, '');
    expect(h.help).toContain('Transit-like engine.');
    expect(h.help).toContain('hash{/:algorithm}');
    expect(Object.keys(h.openapi.paths).sort()).toEqual(['/hash', '/hash/{algorithm}', '/keys/', '/keys/{name}', '/keys/{name}/rotate']);
  });

  it('includes directories below a partial path', () => {
    const h = helpFor(desc, 'keys');
    expect(Object.keys(h.openapi.paths).sort()).toEqual(['/', '/{name}', '/{name}/rotate']);
  });
});
