import { StrongroomError } from '@strongroom/sdk-plugin/host';
import { blocksOf, HclSyntaxError, MAX_HCL_DEPTH, parseHcl } from './parse.js';

describe('parseHcl: values', () => {
  const cases: Array<[string, string, unknown]> = [
    ['empty document', '', {}],
    ['only comments', '# a\n// b\n/* c\n d */\n', {}],
    ['string', 'a = "x"', { a: 'x' }],
    ['escapes', String.raw`a = "q\"b\\n\n\t\u00e9\U0001F600/"`, { a: 'q"b\\n\n\t\u00e9\u{1F600}/' }],
    ['interpolation kept literally', 'a = "${var.x} {{identity.entity.id}}"', { a: '${var.x} {{identity.entity.id}}' }],
    ['integers, negatives, floats, exponents, hex', 'a = 1\nb = -2\nc = 1.5\nd = 1e3\ne = 0x1F', { a: 1, b: -2, c: 1.5, d: 1000, e: 31 }],
    ['bools and null', 'a = true\nb = false\nc = null', { a: true, b: false, c: null }],
    ['list with trailing comma and newlines', 'a = [\n  "x",\n  "y",\n]', { a: ['x', 'y'] }],
    ['empty list', 'a = []', { a: [] }],
    ['nested lists', 'a = [[1, 2], ["x"]]', { a: [[1, 2], ['x']] }],
    ['object value with commas', 'a = { b = 1, c = "d" }', { a: { b: 1, c: 'd' } }],
    ['colon separator', 'a: 1\nb: "x"', { a: 1, b: 'x' }],
    ['items on one line without separators', 'r { charset = "abc" min-chars = 1 }', { r: { charset: 'abc', 'min-chars': 1 } }],
    ['quoted keys', '"a b" = 1', { 'a b': 1 }],
    ['dashed and dotted idents', 'min-chars = 1\na.b = 2', { 'min-chars': 1, 'a.b': 2 }],
    ['heredoc keeps trailing newline', 'a = <<EOF\nline1\n  line2\nEOF\nb = 1', { a: 'line1\n  line2\n', b: 1 }],
    ['indented heredoc strips common indent', 'a = <<-EOT\n    x\n      y\n    EOT\n', { a: 'x\n  y\n' }],
    ['empty heredoc', 'a = <<EOF\nEOF', { a: '' }],
    ['heredoc does not end on an indented marker', 'a = <<EOF\n  EOF\nEOF', { a: '  EOF\n' }],
    ['comments after values', 'a = 1 # one\nb = 2 // two\nc = /* three */ 3', { a: 1, b: 2, c: 3 }],
    ['CRLF line endings', 'a = 1\r\nb = "x"\r\n', { a: 1, b: 'x' }],
    ['JSON document', '{"path": {"secret/*": {"capabilities": ["read", "list"]}}, "n": 1.5, "z": null}', {
      path: { 'secret/*': { capabilities: ['read', 'list'] } },
      n: 1.5,
      z: null,
    }],
    ['JSON pretty-printed', '{\n  "a": [\n    1,\n    2\n  ],\n  "b": {}\n}\n', { a: [1, 2], b: {} }],
  ];
  it.each(cases)('%s', (_name, text, expected) => {
    expect(parseHcl(text)).toEqual(expected);
  });
});

describe('parseHcl: blocks', () => {
  it('nests labelled blocks by label', () => {
    const text = `
      path "secret/*" {
        capabilities = ["read", "list"]
      }
      path "sys/mounts" { capabilities = ["sudo"] }
    `;
    expect(parseHcl(text)).toEqual({
      path: { 'secret/*': { capabilities: ['read', 'list'] }, 'sys/mounts': { capabilities: ['sudo'] } },
    });
  });

  it('collects repeated blocks with the same labels into an array', () => {
    const text = 'rule "charset" { charset = "a" }\nrule "charset" { charset = "b" }\nrule "charset" { charset = "c" }';
    expect(parseHcl(text)).toEqual({ rule: { charset: [{ charset: 'a' }, { charset: 'b' }, { charset: 'c' }] } });
  });

  it('accepts bare identifiers as labels and several labels', () => {
    expect(parseHcl('listener tcp { address = "x" }\nx "a" "b" { y = 1 }')).toEqual({
      listener: { tcp: { address: 'x' } },
      x: { a: { b: { y: 1 } } },
    });
  });

  it('takes a block whose brace sits on the next line, as HCL does', () => {
    expect(parseHcl('path "auth/*"\n{\n  capabilities = ["sudo"]\n}\nui\n\n{}')).toEqual({ path: { 'auth/*': { capabilities: ['sudo'] } }, ui: {} });
  });

  it('treats label-less blocks like object attributes and collects repeats', () => {
    expect(parseHcl('ui {}\nt { a = 1 }\nt { a = 2 }')).toEqual({ ui: {}, t: [{ a: 1 }, { a: 2 }] });
  });

  it('keeps __proto__ and constructor as ordinary own keys', () => {
    const out = parseHcl('__proto__ = { polluted = true }\nconstructor "x" { y = 1 }');
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(out.constructor).toEqual({ x: { y: 1 } });
  });
});

describe('parseHcl: errors name line and column', () => {
  const cases: Array<[string, string, number, number, RegExp]> = [
    ['unterminated string', 'a = 1\nb = "abc', 2, 5, /unterminated string/],
    ['newline in a string', 'a = "ab\nc"', 1, 5, /unterminated string/],
    ['missing value', 'a = \n\n', 3, 1, /expected a value/],
    ['missing closing brace', 'path "x" {\n  a = 1\n', 3, 1, /missing "}"/],
    ['stray closing brace', 'a = 1\n}', 2, 1, /expected a key/],
    ['bare word as value', 'a = b', 1, 5, /unexpected identifier "b"/],
    ['duplicate attribute', 'a = 1\n  a = 2', 2, 3, /duplicate key "a"/],
    ['block and attribute clash', 'a = 1\na "x" {}', 2, 1, /both a block and an attribute/],
    ['closing bracket as a key', 'a = 1 ]', 1, 7, /expected a key/],
    ['bad list separator', 'a = [1 2]', 1, 8, /expected "," or "]"/],
    ['bad escape', 'a = "\\q"', 1, 6, /invalid escape/],
    ['short unicode escape', 'a = "\\u12"', 1, 6, /4 hex digits/],
    ['unterminated comment', 'a = 1\n /* x', 2, 2, /unterminated block comment/],
    ['unclosed heredoc', 'a = <<EOF\nx\n', 1, 5, /no closing EOF/],
    ['heredoc marker not alone', 'a = <<EOF x\nEOF', 1, 11, /must end its line/],
    ['bad character', 'a = 1\n@', 2, 1, /unexpected character "@"/],
    ['bad number', 'a = 12ab', 1, 5, /invalid number/],
    ['trailing garbage after JSON', '{"a": 1} x', 1, 10, /after the closing/],
    ['equals after labels', 'path "x" = 1', 1, 10, /unexpected "="/],
    ['labels then a new item, no brace', 'path "x"\na = 1', 1, 9, /expected "=" or "\{"/],
  ];
  it.each(cases)('%s', (_name, text, line, column, message) => {
    let caught: unknown;
    try {
      parseHcl(text, { source: 'test.hcl' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(HclSyntaxError);
    expect(caught).toBeInstanceOf(StrongroomError);
    const err = caught as HclSyntaxError;
    expect(err.code).toBe('bad_request');
    expect(err.status).toBe(400);
    expect([err.line, err.column]).toEqual([line, column]);
    expect(err.message).toMatch(message);
    expect(err.message).toContain(`test.hcl: parse error at line ${line}, column ${column}`);
  });
});

describe('blocksOf', () => {
  it('flattens the HCL and JSON shapes to the same entries', () => {
    const hcl = parseHcl('listener "tcp" { a = 1 }\nlistener "tcp" { a = 2 }\nlistener "unix" { a = 3 }');
    const json = parseHcl('{"listener": [{"tcp": {"a": 1}}, {"tcp": [{"a": 2}]}, {"unix": {"a": 3}}]}');
    const expected = [
      { labels: ['tcp'], body: { a: 1 } },
      { labels: ['tcp'], body: { a: 2 } },
      { labels: ['unix'], body: { a: 3 } },
    ];
    expect(blocksOf(hcl.listener, 1)).toEqual(expected);
    expect(blocksOf(json.listener, 1)).toEqual(expected);
  });

  it('handles zero labels, absence and wrong shapes', () => {
    expect(blocksOf({ a: 1 }, 0)).toEqual([{ labels: [], body: { a: 1 } }]);
    expect(blocksOf([{ a: 1 }, { a: 2 }], 0)).toHaveLength(2);
    expect(blocksOf(undefined, 1)).toEqual([]);
    expect(blocksOf('x', 1)).toBeNull();
    expect(blocksOf({ tcp: 'x' }, 1)).toBeNull();
  });
});

describe('parseHcl: nesting is bounded', () => {
  const lists = (n: number) => `a = ${'['.repeat(n)}${']'.repeat(n)}`;
  const blocks = (n: number) => `${'b {\n'.repeat(n)}${'}\n'.repeat(n)}`;
  it.each([
    ['lists', lists],
    ['blocks', blocks],
    ['objects', (n: number) => `a = ${'{ b = '.repeat(n - 1)}{}${' }'.repeat(n - 1)}`],
  ])('accepts %s MAX_HCL_DEPTH deep and refuses one more with a syntax error, however deep', (_kind, doc) => {
    expect(() => parseHcl(doc(MAX_HCL_DEPTH))).not.toThrow();
    for (const n of [MAX_HCL_DEPTH + 1, 50_000]) {
      expect(() => parseHcl(doc(n))).toThrow(HclSyntaxError);
      expect(() => parseHcl(doc(n))).toThrow(`nesting is deeper than ${MAX_HCL_DEPTH} levels`);
    }
  });
});
