
import { defineBackend, definePath, defineSecret, renewedAuth, scanStorage } from './define-backend.js';
import { f } from './fields.js';
import { createTestBackend } from './harness.js';
import { getJSON, putJSON } from './storage.js';
import { StrongroomError } from './errors.js';

const calls: string[] = [];

const keysPath = definePath({
  pattern: 'keys/:name',
  fields: {
    name: f.string().describe('Key name'),
    ttl: f.duration().describe('TTL').default(60),
    exportable: f.bool().optional(),
  },
  existenceCheck: async (req) => (await req.storage.get(`keys/${req.data.name}`)) !== null,
  operations: {
    read: {
      summary: 'Read a key',
      handler: async (req) => {
        const k = await getJSON<Record<string, unknown>>(req.storage, `keys/${req.data.name}`);
        return k ? { data: k } : null;
      },
    },
    create: {
      summary: 'Create a key',
      handler: async (req) => {
        calls.push(`create:${req.data.name}`);
        await putJSON(req.storage, `keys/${req.data.name}`, { name: req.data.name, ttl: req.data.ttl, exportable: req.data.exportable ?? false });
      },
    },
    update: {
      summary: 'Update a key',
      handler: async (req) => {
        calls.push(`update:${req.data.name}:${[...req.provided].sort().join(',')}`);
        await putJSON(req.storage, `keys/${req.data.name}`, { name: req.data.name, ttl: req.data.ttl, exportable: req.data.exportable ?? false });
      },
    },
    delete: { summary: 'Delete a key', handler: async (req) => void (await req.storage.delete(`keys/${req.data.name}`)) },
  },
  synopsis: 'Manage keys',
  description: 'Keys are named.',
});

const listPath = definePath({
  pattern: 'keys',
  operations: {
    list: {
      summary: 'List keys',
      // Answers the keys: the SDK paginates and answers 404 for an empty page.
      handler: async (req) => req.storage.list('keys/'),
    },
  },
  synopsis: 'List keys',
});

const hashPath = definePath({
  pattern: 'hash{/:algorithm}',
  fields: { algorithm: f.enum(['sha2-256', 'sha2-512']).default('sha2-256'), input: f.base64() },
  operations: { update: { summary: 'Hash', handler: async (req) => ({ data: { algorithm: req.data.algorithm, len: req.data.input.length } }) } },
  synopsis: 'Hash data',
});

const loginPath = definePath({
  pattern: 'login',
  unauthenticated: true,
  fields: { secret: f.sensitive(f.string()).describe('The secret') },
  operations: { update: { summary: 'Log in', handler: async () => ({ data: { ok: true } }) } },
  synopsis: 'Log in',
});

const creds = defineSecret({
  type: 'creds',
  defaultTtl: 30,
  renew: async (req) => ({ data: { renewed: req.secret?.internalData.user, increment: req.secret?.increment } }),
  revoke: async (req) => {
    calls.push(`revoke:${String(req.secret?.internalData.user)}`);
  },
});

const credsPath = definePath({
  pattern: 'creds/:role',
  operations: { read: { summary: 'Creds', handler: async (req) => creds.response({ username: `u-${req.captures.role}` }, { user: `u-${req.captures.role}` }) } },
  synopsis: 'Issue credentials',
});

const factory = defineBackend({ type: 'secret', help: 'A test engine.', paths: [keysPath, listPath, hashPath, loginPath, credsPath], secrets: [creds] });

const errOf = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    if (e instanceof StrongroomError) return e;
    throw e;
  }
  throw new Error('expected an error');
};

beforeEach(() => (calls.length = 0));

describe('routing', () => {
  it('answers unsupported path (404) when nothing matches, and for a param ending in a period', async () => {
    const b = await createTestBackend(factory);
    expect(await errOf(b.read('nope'))).toMatchObject({ code: 'unsupported_path', status: 404 });
    expect(await errOf(b.read('keys/foo.'))).toMatchObject({ code: 'unsupported_path', status: 404 });
  });

  it('answers 405 for a matching path without that operation', async () => {
    const b = await createTestBackend(factory);
    expect(await errOf(b.patch('keys/a', {}))).toMatchObject({ code: 'unsupported_operation', status: 405 });
    expect(await errOf(b.read('hash'))).toMatchObject({ status: 405 });
  });

  it('routes optional groups with defaults', async () => {
    const b = await createTestBackend(factory);
    expect((await b.write('hash', { input: 'aGk=' }))?.data).toEqual({ algorithm: 'sha2-256', len: 2 });
    expect((await b.write('hash/sha2-512', { input: 'aGk=' }))?.data).toEqual({ algorithm: 'sha2-512', len: 2 });
  });

  it('lists with a trailing slash and paginates', async () => {
    const b = await createTestBackend(factory);
    expect(await b.list('keys')).toBeNull();
    for (const n of ['b', 'a', 'c']) await b.write(`keys/${n}`, {});
    expect((await b.list('keys'))?.data).toEqual({ keys: ['a', 'b', 'c'] });
    expect((await b.list('keys/', { after: 'a', limit: 1 }))?.data).toEqual({ keys: ['b'] });
    expect(await b.list('keys', { after: 'c' })).toBeNull();
    expect(await errOf(b.list('keys', { limit: -1 }))).toMatchObject({ message: 'field "limit": must not be negative' });
  });
});

describe('list handlers answering keys', () => {
  it('refuses a key list from an operation that is not a LIST', async () => {
    const odd = definePath({ pattern: 'odd', operations: { read: { summary: 'x', handler: async () => ['a'] } }, synopsis: 'x' });
    const b = await createTestBackend(defineBackend({ type: 'secret', help: '', paths: [odd] }));
    expect(await errOf(b.read('odd'))).toMatchObject({ status: 500 });
  });
});

describe('fields', () => {
  it('validates and names the field in a 400', async () => {
    const b = await createTestBackend(factory);
    const e = await errOf(b.write('keys/a', { ttl: 'soon' }));
    expect(e).toMatchObject({ code: 'bad_request', status: 400, message: 'field "ttl": invalid duration' });
    const missing = await errOf(b.write('hash', {}));
    expect(missing.message).toBe('field "input": missing required field');
    const two = await errOf(b.write('keys/a', { ttl: 'x', exportable: 'maybe' }));
    expect(two.details).toEqual(['field "ttl": invalid duration', 'field "exportable": invalid boolean']);
  });

  it('warns about unknown fields instead of failing', async () => {
    const b = await createTestBackend(factory);
    const res = await b.write('keys/a', { ttl: '1h', bogus: 1, alpha: 2 });
    expect(res?.warnings).toEqual(['Endpoint ignored these unrecognized parameters: [alpha bogus]']);
    expect((await b.read('keys/a'))?.data).toEqual({ name: 'a', ttl: 3600, exportable: false });
  });

  it('reads JSON null as "not set": defaults apply, a required field is missing, no warning', async () => {
    const b = await createTestBackend(factory);
    const res = await b.write('keys/n', { ttl: null, exportable: null });
    expect(res?.warnings).toBeUndefined();
    expect((await b.read('keys/n'))?.data).toEqual({ name: 'n', ttl: 60, exportable: false });
    expect((await errOf(b.write('hash', { input: null }))).message).toBe('field "input": missing required field');
  });

  it('treats prototype keys in the body as unknown fields', async () => {
    const b = await createTestBackend(factory);
    const body = JSON.parse('{"__proto__": {"ttl": "1h"}, "constructor": 1}') as Record<string, unknown>;
    const res = await b.request({ operation: 'update', path: 'keys/p', data: body });
    expect(res?.warnings).toEqual(['Endpoint ignored these unrecognized parameters: [__proto__ constructor]']);
    expect((await b.read('keys/p'))?.data).toMatchObject({ ttl: 60 });
  });

  it('lets the URL capture win over the body', async () => {
    const b = await createTestBackend(factory);
    const res = await b.write('keys/url', { name: 'body' });
    expect(res?.warnings?.[0]).toMatch(/"name".*URL value is used/);
    expect(await b.read('keys/body')).toBeNull();
    expect((await b.read('keys/url'))?.data).toMatchObject({ name: 'url' });
  });

  it('takes a JSON null as an unset field: the default applies, it is not provided, and a required one is missing', async () => {
    const b = await createTestBackend(factory);
    await b.request({ operation: 'create', path: 'keys/n', data: { ttl: null, exportable: null } });
    expect((await b.read('keys/n'))?.data).toEqual({ name: 'n', ttl: 60, exportable: false });
    await b.request({ operation: 'update', path: 'keys/n', data: { ttl: null } });
    expect(calls).toContain('update:n:name');
    expect(await errOf(b.write('hash', { input: null }))).toMatchObject({ status: 400, message: 'field "input": missing required field' });
  });

  it('shows f.string() as a string in help and OpenAPI', async () => {
    const b = await createTestBackend(factory);
    const login = b.backend.describe().paths.find((p) => p.pattern === 'login')!;
    expect(login.fields.find((x) => x.name === 'secret')?.schema).toMatchObject({ type: 'string' });
  });

  it('tells provided fields from defaults', async () => {
    const b = await createTestBackend(factory);
    await b.write('keys/a', {});
    await b.write('keys/a', { exportable: true });
    expect(calls).toEqual(['create:a', 'update:a:exportable,name']);
  });
});

describe('create vs update', () => {
  it('uses the existence check to choose the handler', async () => {
    const b = await createTestBackend(factory);
    expect(await b.writeOperation('keys/a')).toBe('create');
    await b.write('keys/a', {});
    expect(await b.writeOperation('keys/a')).toBe('update');
    await b.write('keys/a', {});
    expect(calls).toEqual(['create:a', 'update:a:name']);
  });

  it('reports no check for paths without one, and serves create with the update handler', async () => {
    const b = await createTestBackend(factory);
    expect(await b.backend.existenceCheck({ ...baseReq(b.mount), path: 'hash', operation: 'update' })).toEqual({ checkFound: false, exists: false });
    const res = await b.request({ operation: 'create', path: 'hash', data: { input: '' } });
    expect(res?.data).toEqual({ algorithm: 'sha2-256', len: 0 });
  });
});

describe('secrets', () => {
  it('builds a lease-bearing response and routes renew/revoke by secret type', async () => {
    const b = await createTestBackend(factory);
    const issued = await b.read('creds/web');
    expect(issued?.secret).toEqual({ type: 'creds', ttl: 30, maxTtl: 0, renewable: true, internalData: { user: 'u-web' } });
    expect((await b.renew(issued!, { increment: 10 }))?.data).toEqual({ renewed: 'u-web', increment: 10 });
    expect(await b.revoke(issued!)).toBeNull();
    expect(calls).toEqual(['revoke:u-web']);
    const bogus = { ...issued!, secret: { ...issued!.secret!, type: 'other' } };
    expect(await errOf(b.revoke(bogus))).toMatchObject({ code: 'unrecoverable' });
  });
});

describe('login token renewal', () => {
  const login = definePath({
    pattern: 'login',
    unauthenticated: true,
    synopsis: 'Log in.',
    operations: {
      update: {
        summary: 'Log in.',
        handler: async () => ({ auth: { ...renewedAuth({ internalData: { who: 'u1' }, metadata: { m: '1' }, policies: ['p'] }, { ttl: 60, maxTtl: 0, period: 0 }).auth!, displayName: 'u1' } }),
      },
    },
  });

  it('hands the auth to authRenew and answers what it returns', async () => {
    const b = await createTestBackend(
      defineBackend({
        type: 'auth',
        help: 'auth',
        paths: [login],
        authRenew: async (req) => {
          if (req.auth?.internalData.who !== 'u1') throw new StrongroomError('bad_request', 'unknown user');
          return renewedAuth(req.auth, { ttl: 120, maxTtl: 300, period: 0 });
        },
      }),
    );
    const issued = (await b.write('login', {}))!;
    expect((await b.renewAuth(issued))?.auth).toMatchObject({ policies: ['p'], metadata: { m: '1' }, internalData: { who: 'u1' }, ttl: 120, maxTtl: 300, period: 0 });
    const other = { auth: { ...issued.auth!, internalData: { who: 'u2' } } };
    expect(await errOf(b.renewAuth(other))).toMatchObject({ status: 400, message: 'unknown user' });
  });

  it('refuses renewal with a 400 when the auth method declares no authRenew', async () => {
    const b = await createTestBackend(defineBackend({ type: 'auth', help: 'auth', paths: [login] }));
    const issued = (await b.write('login', {}))!;
    expect(await errOf(b.renewAuth(issued))).toMatchObject({ status: 400, message: 'this auth method does not support token renewal' });
  });
});

describe('describe, special paths and help', () => {
  it('describes fields as JSON Schema with flags', async () => {
    const b = await createTestBackend(factory);
    const d = b.backend.describe();
    expect(d.secretTypes).toEqual(['creds']);
    const keys = d.paths.find((p) => p.pattern === 'keys/:name')!;
    expect(keys.existenceCheck).toBe(true);
    expect(keys.fields.find((x) => x.name === 'name')).toMatchObject({ inPath: true, required: true, description: 'Key name' });
    expect(keys.fields.find((x) => x.name === 'ttl')).toMatchObject({ required: false, schema: { default: 60 } });
    const hash = d.paths.find((p) => p.pattern === 'hash{/:algorithm}')!;
    expect(hash.fields.find((x) => x.name === 'algorithm')).toMatchObject({ inPath: true, required: false });
    const login = d.paths.find((p) => p.pattern === 'login')!;
    expect(login.fields[0]).toMatchObject({ sensitive: true });
    expect(b.backend.specialPaths().unauthenticated).toEqual(['login']);
  });

  it('answers the help operation with markdown and relative OpenAPI', async () => {
    const b = await createTestBackend(factory);
    const res = await b.help('keys/a');
    const data = res?.data as { help: string; openapi: { paths: Record<string, unknown> } };
    expect(data.help).toContain('Manage keys');
    expect(data.help).toContain('ttl (duration (sec))\n        TTL');
    expect(data.help).toContain('exportable (bool)\n\n## DESCRIPTION');
    expect(Object.keys(data.openapi.paths)).toEqual(['/']);
  });

  it('a setup hook builds per-mount paths from mount options', async () => {
    const per = defineBackend({
      type: 'secret',
      help: 'x',
      setup: ({ mount }) => ({
        paths: [definePath({ pattern: 'version', operations: { read: { summary: 'v', handler: async () => ({ data: { v: mount.options.v } }) } }, synopsis: 'v' })],
      }),
    });
    const b = await createTestBackend(per, { mount: { options: { v: '2' } } });
    expect((await b.read('version'))?.data).toEqual({ v: '2' });
  });
});

function baseReq(mount: import('./logical.js').MountInfo) {
  return {
    id: 'x',
    mount,
    data: {},
    client: { remoteAddress: '', displayName: '', tokenAccessor: '', entityId: '', policies: [], metadata: {} },
  };
}


describe('resolve-role', () => {
  const backend = defineBackend({
    type: 'auth',
    help: 'roles',
    paths: [
      definePath({
        pattern: 'login/:user',
        unauthenticated: true,
        fields: { user: f.string() },
        resolveRole: async (req) => (req.data.user === 'nobody' ? null : `role-of-${req.data.user}`),
        operations: { update: { summary: 'log in', handler: async () => { calls.push('login'); return null; } } },
      }),
      definePath({ pattern: 'other', operations: { update: { summary: 'x', handler: async () => null } } }),
    ],
  });

  it('answers the role a login would use without running the login, and refuses a path without roles', async () => {
    const t = await createTestBackend(backend);
    calls.length = 0;
    expect(await t.request({ operation: 'resolve-role', path: 'login/ann' })).toEqual({ data: { role: 'role-of-ann' } });
    expect(await t.request({ operation: 'resolve-role', path: 'login/nobody' })).toEqual({ data: { role: '' } });
    expect(calls).toEqual([]);
    await expect(t.request({ operation: 'resolve-role', path: 'other' })).rejects.toMatchObject({ code: 'unsupported_operation' });
  });
});

describe('scan', () => {
  const treePath = definePath({
    pattern: 'tree/*path',
    operations: { scan: { summary: 'Every key below', handler: scanStorage((req) => `tree/${req.captures.path ?? ''}`) } },
    synopsis: 'A tree.',
  });
  const factory = defineBackend({ type: 'secret', help: '', paths: [treePath] });

  it('answers every key below the path, relative, sorted, paged by after/limit, from storage in one call a page', async () => {
    const b = await createTestBackend(factory);
    const keys = Array.from({ length: 1205 }, (_, i) => `a/${String(i % 7)}/k${String(i).padStart(4, '0')}`);
    for (const k of keys) await b.storage.put(`tree/${k}`, new Uint8Array([1]));
    await b.storage.put('other/x', new Uint8Array([1]));
    const sorted = [...keys].sort();
    const first = await b.request({ operation: 'scan', path: 'tree/', data: { limit: '3' } });
    expect(first?.data?.keys).toEqual(sorted.slice(0, 3));
    const next = await b.request({ operation: 'scan', path: 'tree/a/', data: { after: sorted[2]!.slice(2), limit: 2 } });
    expect(next?.data?.keys).toEqual(sorted.slice(3, 5).map((k) => k.slice(2)));
    // No limit, or one above a store page: every key, across several calls to storage.
    expect((await b.request({ operation: 'scan', path: 'tree/', data: {} }))?.data?.keys).toEqual(sorted);
    expect((await b.request({ operation: 'scan', path: 'tree/', data: { limit: 1100 } }))?.data?.keys).toEqual(sorted.slice(0, 1100));
    expect(await b.request({ operation: 'scan', path: 'tree/none/', data: {} })).toBeNull();
  });
});
