/**
 * Bad input against every system endpoint, through the real binary.
 *
 * The endpoints come from the server's own OpenAPI document
 * (`sys/internal/specs/openapi`, so a new sys/ or auth/token/ path is fuzzed
 * without touching this file) plus the seal endpoints served before routing.
 * Every request is authenticated as root and must answer below 500, every
 * 4xx with an `{errors: [...]}` body; afterwards the server must still be
 * healthy and serve a kv write/read round trip.
 *
 * Deterministic: the cases come from a seeded generator
 * (`SR_FUZZ_SEED=<n>` to try another seed; a failure prints its seed and the
 * exact request, so it can be replayed by hand).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { scratchDir, startDevServer, type RunningServer } from '../helpers/server';

// Hundreds of requests in one test: its run time follows the machine's load (81 s seen with 8 suites sharing 2 cores).
jest.setTimeout(240_000);

const SEED = Number(process.env.SR_FUZZ_SEED ?? 20260101);
const CONCURRENCY = 4;
const RANDOM_BODIES_PER_OP = 5;

let s: RunningServer;
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
beforeAll(async () => {
  // Not 'root': the fuzz values include the string "root", and revoking the fuzzing token would end the run.
  s = await startDevServer({ rootTokenId: `fuzz-root-${SEED}` });
});
afterAll(async () => {
  agent.destroy();
  await s.stop();
});

/** mulberry32: small, fast and good enough to pick fuzz cases reproducibly. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
    chance: (p: number) => next() < p,
  };
}

const MB_STRING = 'n'.repeat(1024 * 1024);
const DEEP_JSON = `{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
/** As deep as the server accepts (MAX_JSON_DEPTH in core/src/http/request.ts): every recursive walk must cope. */
const DEEPEST_JSON = `{"a":${'['.repeat(299)}${']'.repeat(299)}}`;

/** Values of every JSON type, the edge cases of each, and strings that parse as something else. */
const VALUES: readonly unknown[] = [
  0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, true, false, null,
  [], [1, 'a', null], [['nested']], {}, { a: { b: [1] } }, { '': '' },
  '', ' ', 'x', '1h', '-5s', '3600', '99999999999999999999h', 'NaN', 'true', 'yes', 'a,b,,c', ',',
  '\u0000', 'a\u0000b', '\u2603', '\ud83d\ude00', '\ud800', '../../etc/passwd', 'root', 'default', '*', '+',
  'path "x" { capabilities = ["read"] }', 'path "x" {', '{"json":true}', '%00', 'x'.repeat(300),
];

/** Path parameter values, inserted raw into the URL (some are percent-encoded on purpose, some are not). */
const SEGMENTS: readonly string[] = [
  'fz-a', 'fz.b', 'trailing.', '.', '..', '%2e%2e', '%2E', '%00', 'a%00b', '%2f..%2f..%2fetc', 'a//b', 'a/', 'a/b/c',
  '%ZZ', '%', '%E2%98%83', '%C3%28', '%FF', '\u00e9', '~!$&\'()*,;=:@', '{name}', 'sys', 'token', 'root', 'default',
  'x'.repeat(5000), 'y'.repeat(20_000),
];

/** Bodies that are not a JSON object, or not JSON at all. */
const MALFORMED_BODIES: readonly (string | Buffer)[] = [
  '{', '{"a":1,}', '[1,2', 'nul', '[]', '"s"', '42', 'true', '{"a":"\\ud800"}', '{"__proto__":{"polluted":1}}',
  Buffer.from([0xff, 0xfe, 0x00, 0x7b]), DEEP_JSON, DEEPEST_JSON,
];

const QUERIES: readonly string[] = ['?list=maybe', '?help=2', '?list=true&after=%00&limit=-1', '?limit=abc&after=', '?a=1&a=2&__proto__=x', '?%ZZ=1', `?q=${'q'.repeat(8000)}`];

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'LIST', 'OPTIONS', 'TRACE'] as const;
const WRITES = new Set(['POST', 'PUT', 'PATCH']);

/** Served before routing, so absent from the OpenAPI document. */
const SEAL_ENDPOINTS: Endpoint[] = ['sys/health', 'sys/seal-status', 'sys/init', 'sys/unseal'].map((template) => ({
  template,
  fields: ['key', 'reset', 'migrate', 'secret_shares', 'secret_threshold', 'pgp_keys', 'root_token_pgp_key'],
}));

interface Endpoint {
  /** OpenAPI path without the leading slash, parameters as `{name}`. */
  template: string;
  /** Property names of every request body and query parameter of the path. */
  fields: string[];
}

interface Case {
  method: string;
  path: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** Token to send; root unless a case needs a throwaway one. */
  token?: string;
}

interface Result {
  status: number;
  text: string;
  error?: string;
}

function endpointsFrom(openapi: { paths: Record<string, Record<string, any>> }): Endpoint[] {
  const out: Endpoint[] = [];
  for (const [p, item] of Object.entries(openapi.paths)) {
    if (!p.startsWith('/sys/') && !p.startsWith('/auth/token/')) continue;
    const fields = new Set<string>();
    for (const param of item.parameters ?? []) fields.add(param.name);
    for (const op of Object.values(item)) {
      if (typeof op !== 'object' || op === null) continue;
      for (const param of (op as any).parameters ?? []) fields.add(param.name);
      const props = (op as any).requestBody?.content?.['application/json']?.schema?.properties;
      for (const name of Object.keys(props ?? {})) fields.add(name);
    }
    out.push({ template: p.slice(1), fields: [...fields] });
  }
  return out;
}

/** What the server will route to, roughly: decoded, slashes collapsed, no trailing slash. */
function normalised(path: string): string {
  let p = path.split('?')[0]!;
  try {
    p = decodeURIComponent(p);
  } catch {
    return p;
  }
  return p.replace(/\/{2,}/g, '/').replace(/^\/|\/$/g, '');
}

/**
 * sys/seal would seal the server and auth/token/revoke-self would revoke the
 * fuzzing token: writes that reach them with a JSON object get a throwaway
 * root token of their own, and writes to sys/seal are left out.
 */
function caller(c: Case): 'root' | 'throwaway' | 'skip' {
  if (!WRITES.has(c.method)) return 'root';
  const target = normalised(c.path.slice('/v1/'.length));
  if (target === 'sys/seal') return reachesHandler(c.body) ? 'skip' : 'root';
  if (target === 'auth/token/revoke-self') return 'throwaway';
  return 'root';
}

/** Whether the server parses this body into parameters (an object, null or nothing) rather than answering 400. */
function reachesHandler(body: string | Buffer | undefined): boolean {
  const text = body === undefined ? '' : body.toString();
  if (text.trim() === '') return true;
  try {
    const v: unknown = JSON.parse(text);
    return v === null || (typeof v === 'object' && !Array.isArray(v));
  } catch {
    return false;
  }
}

function* casesFor(ep: Endpoint, rnd: ReturnType<typeof prng>): Generator<Case> {
  const params = [...ep.template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  // Each parameter in turn takes every odd segment; the others stay plain.
  const paths = params.length === 0 ? [`/v1/${ep.template}`, `/v1//${ep.template}`, `/v1/${ep.template}/`, `/v1/${ep.template}/./x`, `/v1/${ep.template}/%2e%2e/x`] : [];
  for (const param of params) {
    for (const seg of SEGMENTS) {
      let p = ep.template;
      for (const other of params) p = p.replace(`{${other}}`, other === param ? seg : 'fz-plain');
      paths.push(`/v1/${p}`);
    }
  }
  for (const path of paths) {
    for (const method of METHODS) {
      if (!WRITES.has(method)) {
        yield { method, path };
        // Then one odd query: a generic one, or one of the endpoint's own fields with a wrong value.
        const fieldQuery = ep.fields.length > 0 && rnd.chance(0.5);
        yield { method, path: fieldQuery ? `${path}?${rnd.pick(ep.fields)}=${percentEncode(String(rnd.pick(VALUES)))}` : path + rnd.pick(QUERIES) };
        continue;
      }
      // Long paths carry one body each: the body variety is spent on the plain path below.
      yield { method, path, body: JSON.stringify(randomBody(ep, rnd)) };
    }
  }
  const plain = paths[0]!;
  for (const method of ['POST', 'PUT', 'PATCH']) {
    for (const body of MALFORMED_BODIES) yield { method, path: plain, body, headers: method === 'PATCH' ? { 'Content-Type': 'application/merge-patch+json' } : {} };
    for (let i = 0; i < RANDOM_BODIES_PER_OP; i++) yield { method, path: plain, body: JSON.stringify(randomBody(ep, rnd)) };
    // Every field at once with the same kind of wrong value, the 1 MB string included.
    for (const v of [MB_STRING, 12345, [], {}, null, true]) yield { method, path: plain, body: JSON.stringify(Object.fromEntries(ep.fields.map((f) => [f, v]))) };
  }
}

/** Every UTF-8 byte as %XX (encodeURIComponent throws on a lone surrogate; Buffer writes U+FFFD for it). */
function percentEncode(v: string): string {
  return [...Buffer.from(v, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
}

function randomBody(ep: Endpoint, rnd: ReturnType<typeof prng>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const f of ep.fields) if (rnd.chance(0.6)) body[f] = rnd.pick(VALUES);
  if (rnd.chance(0.3)) body[`unknown_${rnd.pick(['a', 'b'])}`] = rnd.pick(VALUES);
  return body;
}

function send(c: Case): Promise<Result> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { ...(c.headers ?? {}) };
    if (c.token) headers['X-Service-Token'] = c.token;
    if (c.body !== undefined) headers['Content-Length'] = Buffer.byteLength(c.body);
    let req: http.ClientRequest;
    try {
      req = http.request({ host: '127.0.0.1', port: s.port, method: c.method, path: c.path, headers, agent }, (res) => {
        // A live stream (sys/monitor, sys/events/subscribe) does not end: its head is the answer.
        if ((res.statusCode ?? 0) < 300 && /^(text\/event-stream|text\/plain|application\/x-ndjson)/.test(res.headers['content-type'] ?? '')) {
          resolve({ status: res.statusCode ?? 0, text: '' });
          req.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (e) => resolve({ status: res.statusCode ?? 0, text: '', error: e.message }));
      });
    } catch (e) {
      // The client refused to send it (e.g. a character Node's client will not put in a request line).
      resolve({ status: -1, text: '', error: `client: ${(e as Error).message}` });
      return;
    }
    req.setTimeout(15_000, () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ status: 0, text: '', error: e.message }));
    req.end(c.body);
  });
}

/** Why a result is wrong, or null when it is fine. */
function problem(c: Case, r: Result): string | null {
  if (r.status === -1) return null;
  if (r.status === 0) return `no response (${r.error})`;
  if (r.status >= 500) return `status ${r.status}`;
  if (r.status >= 400 && c.method !== 'HEAD') {
    let body: any;
    try {
      body = JSON.parse(r.text);
    } catch {
      return `status ${r.status} without a JSON body`;
    }
    if (!Array.isArray(body?.errors) || !body.errors.every((e: unknown) => typeof e === 'string')) return `status ${r.status} without an errors array`;
  }
  return null;
}

function describeCase(c: Case): string {
  const clip = (x: string) => (x.length > 160 ? `${x.slice(0, 160)}...(${x.length} chars)` : x);
  const body = c.body === undefined ? '' : ` body=${clip(Buffer.isBuffer(c.body) ? `hex:${c.body.toString('hex')}` : c.body)}`;
  return `${c.method} ${clip(c.path)}${body}`;
}

async function throwawayRootToken(): Promise<string> {
  const r = await s.api('POST', 'auth/token/create', { policies: ['root'], ttl: '10m' });
  return r.body.auth.client_token as string;
}

it('answers bad input to every system endpoint below 500, with an errors array, and stays correct', async () => {
  const spec = await s.api('GET', 'sys/internal/specs/openapi');
  expect(spec.status).toBe(200);
  // The document itself is the body (not inside the envelope); it lists the seal paths too, fuzzed here with their full field lists.
  const documented = endpointsFrom(spec.body);
  expect(documented.map((e) => e.template)).toEqual(expect.arrayContaining(SEAL_ENDPOINTS.map((e) => e.template)));
  const endpoints = [...documented.filter((e) => !SEAL_ENDPOINTS.some((x) => x.template === e.template)), ...SEAL_ENDPOINTS];
  // The document really lists the system and token endpoints (a broken enumeration must not pass silently).
  const templates = endpoints.map((e) => e.template);
  expect(templates).toEqual(expect.arrayContaining(['sys/mounts/{path}', 'sys/policies/acl/{name}', 'sys/audit/{path}', 'auth/token/create', 'auth/token/lookup-accessor', 'sys/health']));
  expect(endpoints.length).toBeGreaterThan(40);

  // An audit device sees every fuzzed request and response too (its hashing walks every value).
  const auditDir = scratchDir('sr-fuzz-audit-'); // removed after the run, pass or fail
  expect((await s.api('POST', 'sys/audit/fuzz-audit', { type: 'file', options: { file_path: join(auditDir, 'audit.log') } })).status).toBe(204);

  const rnd = prng(SEED);
  const cases: Case[] = [];
  for (const ep of endpoints) for (const c of casesFor(ep, rnd)) cases.push(c);

  const failures: string[] = [];
  let sent = 0;
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++]!;
      const who = caller(c);
      if (who === 'skip') continue;
      if (s.proc.exitCode !== null || s.proc.signalCode !== null) return;
      c.token = who === 'throwaway' ? await throwawayRootToken() : s.rootToken;
      const r = await send(c);
      sent++;
      const why = problem(c, r);
      if (why) failures.push(`${why}: ${describeCase(c)} -> ${r.text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  // A dead server fails every later request: say why it died, once.
  if (s.proc.exitCode !== null || s.proc.signalCode !== null) throw new Error(`the server died (seed ${SEED}); first failures:\n${failures.slice(0, 10).join('\n')}\n${s.output().slice(-4000)}`);
  if (failures.length) console.error(`fuzz seed ${SEED}: ${failures.length} failures of ${sent} requests`);
  expect(failures.slice(0, 30)).toEqual([]);
  expect(sent).toBeGreaterThan(10_000);

  // Alive and correct afterwards.
  expect((await s.api('GET', 'sys/health', undefined, { token: null })).status).toBe(200);
  expect((await s.api('GET', 'auth/token/lookup-self')).body.data.policies).toEqual(['root']);
  expect((await s.api('POST', 'secret/data/after-fuzz', { data: { v: 'still-here' } })).status).toBe(200);
  expect((await s.api('GET', 'secret/data/after-fuzz')).body.data.data).toEqual({ v: 'still-here' });
  const mounts = await s.api('GET', 'sys/mounts');
  expect(Object.keys(mounts.body.data)).toEqual(expect.arrayContaining(['secret/', 'sys/']));
  // Deep bodies through a plugin and the audit device: stored at the limit, refused beyond it.
  const deep = (n: number) => fetch(`${s.url}/v1/secret/data/deep`, { method: 'POST', headers: { 'X-Service-Token': s.rootToken }, body: `{"data":{"x":${'['.repeat(n)}${']'.repeat(n)}}}` });
  expect((await deep(297)).status).toBe(200);
  const tooDeep = await deep(20_000);
  expect(tooDeep.status).toBe(400);
  expect((await tooDeep.json()).errors[0]).toMatch(/nested deeper/);
  expect(readFileSync(join(auditDir, 'audit.log'), 'utf8').split('\n').length).toBeGreaterThan(1000);
}, 600_000); // ~21,000 cases over every documented system endpoint: grows with the API (110 s alone, 4+ min in a full run on a loaded 2-core machine)

it('answers bad input inside namespaces (by header and by path) below 500, and keeps tenants apart', async () => {
  expect((await s.api('POST', 'secret/data/before-ns-fuzz', { data: { v: 'root-tenant' } })).status).toBe(200);
  expect((await s.api('POST', 'sys/namespaces/fz-ns', {})).status).toBe(200);
  expect((await s.api('POST', 'sys/namespaces/inner', {}, { headers: { 'X-Service-Namespace': 'fz-ns' } })).status).toBe(200);
  const spec = await s.api('GET', 'sys/internal/specs/openapi', undefined, { headers: { 'X-Service-Namespace': 'fz-ns' } });
  expect(spec.status).toBe(200);
  const endpoints = endpointsFrom(spec.body);
  expect(endpoints.map((e) => e.template)).toEqual(expect.arrayContaining(['sys/namespaces/{path}', 'sys/mounts/{path}', 'auth/token/create']));
  // A child namespace's sys/ has no server-wide paths: the fuzzer cannot seal the server from there.
  expect(endpoints.map((e) => e.template)).not.toContain('sys/seal');

  const rnd = prng(SEED + 1);
  const cases: Array<Case & { who: ReturnType<typeof caller> }> = [];
  let i = 0;
  for (const ep of endpoints) {
    for (const c of casesFor(ep, rnd)) {
      // Every fifth case, alternating the namespace by header, by path, and split across both.
      if (i++ % 5 !== 0) continue;
      const who = caller(c); // decided on the path inside the namespace (revoke-self gets a throwaway token)
      const rest = c.path.slice('/v1/'.length);
      const form = i % 3;
      if (form === 0) cases.push({ ...c, who, headers: { ...c.headers, 'X-Service-Namespace': 'fz-ns/inner' } });
      else if (form === 1) cases.push({ ...c, who, path: `/v1/fz-ns/inner/${rest}` });
      else cases.push({ ...c, who, path: `/v1/inner/${rest}`, headers: { ...c.headers, 'X-Service-Namespace': 'fz-ns' } });
    }
  }
  const failures: string[] = [];
  // Keep-alive sockets left idle since the last pass may be closing on the server's side right now.
  agent.destroy();
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++]!;
      if (c.who === 'skip' || s.proc.exitCode !== null) continue;
      c.token = c.who === 'throwaway' ? await throwawayRootToken() : s.rootToken;
      const r = await send(c);
      const why = problem(c, r);
      if (why) failures.push(`${why}: ${describeCase(c)} -> ${r.text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  if (s.proc.exitCode !== null || s.proc.signalCode !== null) throw new Error(`the server died (seed ${SEED + 1}):\n${failures.slice(0, 10).join('\n')}\n${s.output().slice(-4000)}`);
  if (failures.length) console.error(`namespaced fuzz seed ${SEED + 1}: ${failures.length} failures`);
  expect(failures.slice(0, 30)).toEqual([]);
  expect(cases.length).toBeGreaterThan(800);
  // Still unsealed, and the root namespace's data untouched by whatever the fuzzer made inside.
  expect((await s.api('GET', 'sys/seal-status', undefined, { token: null })).body.sealed).toBe(false);
  expect((await s.api('GET', 'secret/data/before-ns-fuzz')).body.data.data).toEqual({ v: 'root-tenant' });
});

it('answers malformed request lines and heads on a raw socket with a JSON 4xx', async () => {
  const raw = (bytes: Buffer | string) =>
    new Promise<string>((resolve, reject) => {
      const sock = net.connect(s.port, '127.0.0.1', () => sock.end(bytes));
      let out = '';
      sock.on('data', (d: Buffer) => (out += d.toString('latin1')));
      sock.on('close', () => resolve(out));
      sock.on('error', reject);
    });
  const heads = [
    'FOO /v1/sys/health HTTP/1.1\r\nHost: x\r\n\r\n',
    'GET /v1/sys/mounts/a b HTTP/1.1\r\nHost: x\r\n\r\n',
    `GET /v1/sys/mounts/\u2603 HTTP/1.1\r\nHost: x\r\nX-Service-Token: ${'root'}\r\n\r\n`,
    'GET /v1/sys/health HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello',
    'POST /v1/sys/policies/acl/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    'GET /v1/sys/health HTTP/9.9\r\nHost: x\r\n\r\n',
    `GET /v1/sys/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(40_000)}\r\n\r\n`,
    'LIST /v1/sys/policies/acl HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
    'GET \x00 HTTP/1.1\r\n\r\n',
  ];
  for (const head of heads) {
    const out = await raw(Buffer.from(head, 'utf8'));
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1]);
    expect({ head: head.slice(0, 60), status: status >= 400 && status < 500 }).toEqual({ head: head.slice(0, 60), status: true });
    expect(JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4)).errors).toEqual(expect.any(Array));
  }
  expect((await s.api('GET', 'sys/health', undefined, { token: null })).status).toBe(200);
});
