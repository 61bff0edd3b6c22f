import { createNamespaceRegistry, normalizeNamespacePath } from './namespaces';

describe('namespace resolution', () => {
  const reg = createNamespaceRegistry();
  reg.add({ id: 'aaaa', path: 'ns1/', customMetadata: {} });
  reg.add({ id: 'bbbb', path: 'ns1/ns2/', customMetadata: {} });

  it.each([
    ['secret/foo', 'root', 'secret/foo'],
    ['ns1/secret/foo', 'aaaa', 'secret/foo'],
    ['ns1/ns2/secret/foo', 'bbbb', 'secret/foo'],
    ['ns1/nsX/secret/foo', 'aaaa', 'nsX/secret/foo'],
    ['ns2/secret/foo', 'root', 'ns2/secret/foo'],
  ])('%s -> %s + %s', (joined, id, rest) => {
    const r = reg.resolve(joined);
    expect(r.namespace.id).toBe(id);
    expect(r.path).toBe(rest);
  });

  it('normalises namespace paths', () => {
    expect(normalizeNamespacePath('/ns1//ns2')).toBe('ns1/ns2/');
    expect(normalizeNamespacePath('')).toBe('');
  });

  it('gives non-root namespaces their own storage prefix', () => {
    expect(reg.storagePrefix(reg.byId('aaaa')!)).toBe('namespaces/aaaa/');
    expect(reg.storagePrefix(reg.byId('root')!)).toBe('');
  });
});
