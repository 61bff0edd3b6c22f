/** Which rule applies: Vault's order, most specific first. */
import { indexRules, type LeaseCountRule, type QuotaTarget } from './rules.js';

const rule = (name: string, target: Partial<QuotaTarget>): LeaseCountRule => ({
  name,
  path: '',
  role: target.role ?? '',
  ownerNamespaceId: 'root',
  type: 'lease-count',
  maxLeases: 1,
  target: { namespaceId: 'root', mountPath: '', suffix: '', glob: false, role: '', ...target },
});

describe('quota rules', () => {
  const idx = indexRules([
    rule('global', {}),
    rule('ns', { namespaceId: 'n1' }),
    rule('mount', { mountPath: 'db/' }),
    rule('role', { mountPath: 'auth/approle/', role: 'web' }),
    rule('prefix', { mountPath: 'db/', suffix: 'creds/', glob: true }),
    rule('longer-prefix', { mountPath: 'db/', suffix: 'creds/app', glob: true }),
    rule('exact', { mountPath: 'db/', suffix: 'creds/app' }),
  ]);
  const find = (namespaceId: string, mountPath: string, path: string, role?: string) => idx.find({ namespaceId, mountPath, path, ...(role ? { role } : {}) })?.name ?? null;

  it('prefers an exact path, then the longest prefix, then the mount', () => {
    expect(find('root', 'db/', 'creds/app')).toBe('exact');
    expect(find('root', 'db/', 'creds/app2')).toBe('longer-prefix');
    expect(find('root', 'db/', 'creds/other')).toBe('prefix');
    expect(find('root', 'db/', 'roles/x')).toBe('mount');
  });

  it('applies a role rule to logins with that role only', () => {
    expect(find('root', 'auth/approle/', 'login', 'web')).toBe('role');
    expect(find('root', 'auth/approle/', 'login', 'other')).toBe('global');
    expect(find('root', 'auth/approle/', 'login')).toBe('global');
  });

  it('falls back to the namespace, then to the global rule, which alone reaches every namespace', () => {
    expect(find('root', 'kv/', 'x')).toBe('global');
    expect(find('n1', 'db/', 'creds/app')).toBe('ns');
    expect(find('n2', 'db/', 'x')).toBe('global');
    expect(indexRules([rule('ns', { namespaceId: 'n1' })]).find({ namespaceId: 'n2', mountPath: '', path: 'x' })).toBeNull();
  });
});
