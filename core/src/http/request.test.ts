import { StrongroomError } from '@strongroom/sdk-plugin/host';
import { LIST_MARKER_HEADER, SCAN_MARKER_HEADER } from './list-method.js';
import { MAX_JSON_DEPTH, extractToken, jsonDeeperThan, normaliseNamespace, normalisePath, parseApiRequest, parseJsonBody, parseQuery, type RawHttpRequest } from './request.js';

const raw = (over: Partial<RawHttpRequest>): RawHttpRequest => ({
  method: 'GET',
  url: '/v1/secret/foo',
  headers: {},
  rawBody: Buffer.alloc(0),
  remoteAddress: '::ffff:10.1.2.3',
  ...over,
});
const parse = (over: Partial<RawHttpRequest>, requireRequestHeader = false) => parseApiRequest(raw(over), { requireRequestHeader });

describe('parseApiRequest', () => {
  it('turns the translated LIST verb into a list and hides the marker header', () => {
    const headers = { [LIST_MARKER_HEADER]: '1', host: 'x' };
    const r = parse({ url: '/v1/secret/metadata/?after=a&limit=5', headers });
    expect(r).toMatchObject({ method: 'LIST', operation: 'list', path: 'secret/metadata/', data: { after: 'a', limit: '5' } });
    expect(r.headers[LIST_MARKER_HEADER]).toBeUndefined();
  });

  it('turns the translated SCAN verb and ?scan=true into a scan, hiding the marker and the query flag', () => {
    const headers = { [SCAN_MARKER_HEADER]: '1', host: 'x' };
    const r = parse({ url: '/v1/secret/metadata/?after=a&limit=5', headers });
    expect(r).toMatchObject({ method: 'SCAN', operation: 'scan', data: { after: 'a', limit: '5' } });
    expect(r.headers[SCAN_MARKER_HEADER]).toBeUndefined();
    expect(parse({ url: '/v1/secret/metadata/?scan=true&limit=2' })).toMatchObject({ method: 'GET', operation: 'scan', data: { limit: '2' } });
    expect(parse({ url: '/v1/secret/metadata/?scan=false' }).operation).toBe('read');
  });

  it('only honours the marker on GET', () => {
    expect(parse({ method: 'POST', headers: { [LIST_MARKER_HEADER]: '1' } }).operation).toBe('write');
  });

  it('maps HEAD to a read without body and strips the IPv4-mapped prefix', () => {
    expect(parse({ method: 'HEAD' })).toMatchObject({ operation: 'read', remoteAddress: '10.1.2.3' });
  });

  it('answers 405 to unknown methods and 412 without the request header when required', () => {
    expect(() => parse({ method: 'OPTIONS' })).toThrow(expect.objectContaining({ status: 405 }));
    expect(() => parse({}, true)).toThrow(expect.objectContaining({ status: 412 }));
    expect(parse({ headers: { 'x-service-request': 'TRUE' } }, true).operation).toBe('read');
  });

  it('keeps query parameters out of write data and the raw body as received', () => {
    const body = Buffer.from('{"plaintext":"aGk="}');
    const r = parse({ method: 'PUT', url: '/v1/transit/encrypt/k?x=1', rawBody: body });
    expect(r.data).toEqual({ plaintext: 'aGk=' });
    expect(r.rawBody).toBe(body);
  });

  it('treats help=1 as a flag, not data', () => {
    expect(parse({ url: '/v1/transit/keys/a?help=1' })).toMatchObject({ help: true, data: {} });
    expect(parse({ url: '/v1/a?help=0' }).help).toBe(false);
  });
});

describe('pieces', () => {
  it('normalises paths and namespaces', () => {
    expect(normalisePath('//a///b/', 'path')).toBe('a/b/');
    expect(normalisePath('a.b/c..d', 'path')).toBe('a.b/c..d');
    expect(() => normalisePath('a/../b', 'path')).toThrow(StrongroomError);
    expect(normaliseNamespace(' ns1/ns2 ')).toBe('ns1/ns2/');
    expect(normaliseNamespace('root')).toBe('');
    expect(normaliseNamespace('/')).toBe('');
    expect(normaliseNamespace(undefined)).toBe('');
  });

  it('parses queries with repeated keys', () => {
    expect(parseQuery('a=1&a=2&a=3&b=x+y&c=%2F')).toEqual({ a: ['1', '2', '3'], b: 'x y', c: '/' });
  });

  it('extracts tokens', () => {
    expect(extractToken({ authorization: 'bearer abc' })).toBe('abc');
    expect(extractToken({ authorization: 'Bearer' })).toBeUndefined();
    expect(extractToken({ 'x-vault-token': '  ' })).toBeUndefined();
  });

  it('parses JSON bodies', () => {
    expect(parseJsonBody(Buffer.from('  \n'))).toEqual({});
    expect(parseJsonBody(Buffer.from('{"a":[1]}'))).toEqual({ a: [1] });
    expect(() => parseJsonBody(Buffer.from('"str"'))).toThrow(/must be a JSON object/);
    expect(() => parseJsonBody(Buffer.from('{bad'))).toThrow(/^failed to parse JSON input: /);
    const polluted = parseJsonBody(Buffer.from('{"__proto__":{"admin":true}}'));
    expect(Object.getPrototypeOf(polluted)).toBe(Object.prototype);
    expect(Object.keys(polluted)).toEqual([]);
  });

  it('refuses bodies nested deeper than MAX_JSON_DEPTH (later recursion would overflow the stack)', () => {
    const nested = (n: number) => Buffer.from(`{"a":${'['.repeat(n - 1)}${']'.repeat(n - 1)}}`);
    expect(() => parseJsonBody(nested(MAX_JSON_DEPTH))).not.toThrow();
    expect(() => parseJsonBody(nested(MAX_JSON_DEPTH + 1))).toThrow(/nested deeper than 300 levels/);
    expect(() => parseJsonBody(nested(20_000))).toThrow(/nested deeper/);
    // Brackets inside strings (escaped quotes included) are not nesting.
    const inString = Buffer.from(JSON.stringify({ s: `\\"${'['.repeat(MAX_JSON_DEPTH * 2)}` }));
    expect(jsonDeeperThan(inString, MAX_JSON_DEPTH)).toBe(false);
    expect(parseJsonBody(inString)).toEqual(JSON.parse(inString.toString()));
    // A string ending in an escaped backslash closes at its quote: the nesting after it counts.
    const afterBackslash = Buffer.from(`{"s":"x\\\\","t":${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}}`);
    expect(JSON.parse(afterBackslash.toString()).s).toBe('x\\');
    expect(jsonDeeperThan(afterBackslash, MAX_JSON_DEPTH)).toBe(true);
  });
});
