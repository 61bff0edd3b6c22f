import { z } from 'zod';
import {
  f,
  fieldJsonSchema,
  fieldMeta,
  formatGoDuration,
  parseBase64,
  parseBool,
  parseCommaIntList,
  parseCommaList,
  parseDuration,
  parseDurationMs,
  parseInteger,
  parseMap,
} from './fields.js';

describe('parseDuration', () => {
  it.each([
    [3600, 3600],
    ['3600', 3600],
    ['1h', 3600],
    ['90m', 5400],
    ['1h30m', 5400],
    ['10s', 10],
    ['2d', 172800],
    ['1.5h', 5400],
    ['1500ms', 1],
    ['', 0],
    [' 5m ', 300],
    [0, 0],
  ])('%p -> %p seconds', (input, want) => {
    expect(parseDuration(input)).toBe(want);
  });

  it.each([['abc'], ['1x'], ['-5'], [-1], ['h'], [true], [null], [{}], ['1d2h']])('refuses %p', (input) => {
    expect(() => parseDuration(input)).toThrow('invalid duration');
  });

  it.each([
    [3, 3000],
    ['250ms', 250],
    ['1.5s', 1500],
    ['2m', 120000],
    ['1d', 86400000],
    ['999us', 0],
  ])('%p -> %p milliseconds', (input, want) => {
    expect(parseDurationMs(input)).toBe(want);
  });

  it('formats seconds as Go prints durations', () => {
    expect(formatGoDuration(0)).toBe('0s');
    expect(formatGoDuration(90)).toBe('1m30s');
    expect(formatGoDuration(3600)).toBe('1h0m0s');
    expect(formatGoDuration(12319)).toBe('3h25m19s');
  });
});

describe('parseBool / parseInteger / lists / base64 / map', () => {
  it('reads booleans as strconv.ParseBool does', () => {
    for (const t of [true, 'true', 'True', 'TRUE', '1', 't', 1]) expect(parseBool(t)).toBe(true);
    for (const v of [false, 'false', '0', 'f', 'F', 0]) expect(parseBool(v)).toBe(false);
    for (const bad of ['yes', 2, null]) expect(() => parseBool(bad)).toThrow('invalid boolean');
  });

  it('reads integers from numbers and decimal strings only', () => {
    expect(parseInteger(3)).toBe(3);
    expect(parseInteger('3')).toBe(3);
    expect(parseInteger('-2')).toBe(-2);
    for (const bad of ['3.5', 3.5, 'x', true]) expect(() => parseInteger(bad)).toThrow('invalid integer');
  });

  it('splits comma lists, trims and drops empties', () => {
    expect(parseCommaList('a, b,,c ')).toEqual(['a', 'b', 'c']);
    expect(parseCommaList([' a', 'b', ''])).toEqual(['a', 'b']);
    expect(parseCommaList('')).toEqual([]);
    expect(() => parseCommaList(5)).toThrow('invalid list');
    expect(() => parseCommaList([{}])).toThrow('invalid list item');
    expect(parseCommaIntList('1,2')).toEqual([1, 2]);
    expect(parseCommaIntList([1, '3'])).toEqual([1, 3]);
    expect(parseCommaIntList(4)).toEqual([4]);
  });

  it('decodes padded standard base64 only', () => {
    expect(parseBase64('aGVsbG8=').toString()).toBe('hello');
    expect(parseBase64('').length).toBe(0);
    for (const bad of ['aGVsbG8', 'a b=', 'aGVs*G8=', 7]) expect(() => parseBase64(bad)).toThrow('invalid base64');
  });

  it('reads maps from objects and JSON strings', () => {
    expect(parseMap({ a: 1 })).toEqual({ a: 1 });
    expect(parseMap('{"a":"b"}')).toEqual({ a: 'b' });
    expect(() => parseMap('[1]')).toThrow('expected an object');
    expect(() => parseMap('{')).toThrow('invalid JSON object');
  });
});

describe('f helpers', () => {
  it('accept every lenient wire form and give typed output', () => {
    const schema = z.object({
      s: f.string(),
      n: f.int(),
      b: f.bool(),
      d: f.duration(),
      l: f.commaList(),
      il: f.commaIntList(),
      raw: f.base64(),
      m: f.map(z.string()),
      e: f.enum(['hex', 'base64']),
    });
    const out = schema.parse({ s: 12, n: '3', b: 'true', d: '1h', l: 'a,b', il: '1,2', raw: 'aGk=', m: '{"k":"v"}', e: 'hex' });
    expect(out).toEqual({ s: '12', n: 3, b: true, d: 3600, l: ['a', 'b'], il: [1, 2], raw: Buffer.from('hi'), m: { k: 'v' }, e: 'hex' });
  });

  it('read an empty string as the zero value of a boolean, an integer and a duration (Vault clients send "" for unset)', () => {
    const schema = z.object({ b: f.bool(), n: f.int({ min: 0 }), d: f.duration(), l: f.commaList() });
    expect(schema.parse({ b: '', n: '', d: '', l: '' })).toEqual({ b: false, n: 0, d: 0, l: [] });
  });

  it('reports the parser message as the issue', () => {
    const r = z.object({ ttl: f.duration() }).safeParse({ ttl: 'soon' });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]).toMatchObject({ path: ['ttl'], message: 'invalid duration' });
    expect(f.int({ min: 1 }).safeParse('0').error?.issues[0]?.message).toBe('must be at least 1');
    expect(f.map(z.string()).safeParse({ k: 1 }).error?.issues[0]?.message).toBe('invalid value for key "k"');
  });

  it('applies defaults and keeps metadata through describe/default', () => {
    const ttl = f.sensitive(f.duration()).describe('Lease TTL').default(60);
    expect(ttl.parse(undefined)).toBe(60);
    expect(fieldMeta(ttl)).toMatchObject({ sensitive: true, description: 'Lease TTL' });
    expect(fieldMeta(f.query(f.int()).optional())).toMatchObject({ query: true });
    expect(fieldMeta(f.string())).toEqual({});
  });

  it('describes the wire (input) form as JSON Schema', () => {
    expect(fieldJsonSchema(f.duration().describe('TTL').default(60))).toEqual({ type: ['number', 'string'], description: 'TTL', default: 60, 'x-strongroom-type': 'duration (sec)' });
    expect(fieldJsonSchema(f.enum(['a', 'b']).default('a'))).toEqual({ type: 'string', enum: ['a', 'b'], default: 'a' });
    expect(fieldJsonSchema(f.bool())).toEqual({ type: ['boolean', 'number', 'string'], 'x-strongroom-type': 'bool' });
  });
});
