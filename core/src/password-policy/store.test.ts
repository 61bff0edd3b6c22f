import { satisfiesPolicy, StrongroomError } from '@strongroom/sdk-plugin/host';
import { createNamespaceRegistry, ROOT_NAMESPACE, type Namespace } from '../namespace/namespaces.js';
import { createInmemPhysical } from '../storage/inmem.js';
import { parsePasswordPolicy } from './password-policy.js';
import { createPasswordPolicyStore } from './store.js';

const DIGITS6 = 'length = 6\nrule "charset" {\n  charset = "0123456789"\n  min-chars = 6\n}\n';

function setup() {
  const physical = createInmemPhysical();
  const namespaces = createNamespaceRegistry();
  const child: Namespace = { id: 'ns1id', path: 'ns1/', customMetadata: {} };
  namespaces.add(child);
  const store = createPasswordPolicyStore({ store: physical, namespaces });
  return { physical, namespaces, child, store };
}

async function errorOf(p: Promise<unknown>): Promise<StrongroomError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof StrongroomError) return err;
    throw err;
  }
  throw new Error('expected an error');
}

describe('password policy store', () => {
  it('saves the decoded document, lists, generates and deletes', async () => {
    const { store, physical } = setup();
    await store.put(ROOT_NAMESPACE, 'pin', Buffer.from(DIGITS6).toString('base64'));
    expect(await store.get(ROOT_NAMESPACE, 'pin')).toBe(DIGITS6);
    expect(await store.list(ROOT_NAMESPACE)).toEqual(['pin']);
    const pw = await store.generate(ROOT_NAMESPACE, 'pin');
    expect(pw).toMatch(/^[0-9]{6}$/);
    expect(await physical.get('sys/password_policy/pin')).not.toBeNull();

    await store.delete(ROOT_NAMESPACE, 'pin');
    expect(await store.get(ROOT_NAMESPACE, 'pin')).toBeNull();
    expect(await store.generate(ROOT_NAMESPACE, 'pin')).toBeNull();
    expect(await store.list(ROOT_NAMESPACE)).toEqual([]);
  });

  it('reads policies saved by an earlier store (nothing lives only in the cache)', async () => {
    const { store, physical, namespaces } = setup();
    await store.put(ROOT_NAMESPACE, 'pin', DIGITS6);
    const fresh = createPasswordPolicyStore({ store: physical, namespaces });
    expect(satisfiesPolicy(parsePasswordPolicy(DIGITS6), (await fresh.generate(ROOT_NAMESPACE, 'pin'))!)).toBe(true);
  });

  it('keeps namespaces apart', async () => {
    const { store, child, physical } = setup();
    await store.put(child, 'pin', DIGITS6);
    expect(await store.list(ROOT_NAMESPACE)).toEqual([]);
    expect(await store.get(ROOT_NAMESPACE, 'pin')).toBeNull();
    expect(await store.list(child)).toEqual(['pin']);
    expect(await physical.get('namespaces/ns1id/sys/password_policy/pin')).not.toBeNull();
  });

  it('refuses an unsatisfiable document and writes nothing', async () => {
    const { store, physical } = setup();
    const err = await errorOf(store.put(ROOT_NAMESPACE, 'tight', 'length = 4\nrule "charset" { charset = "a"\n min-chars = 3 }\nrule "charset" { charset = "b"\n min-chars = 2 }'));
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/min-chars add up to 5, more than length 4/);
    expect(await physical.list('sys/password_policy/')).toEqual([]);
  });

  it.each([[''], ['a b'], ['x/y'], ['\u0001'], ['n'.repeat(257)]])('refuses the name %j with a 400 naming name', async (name) => {
    const { store } = setup();
    const err = await errorOf(store.put(ROOT_NAMESPACE, name, DIGITS6));
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/^name: /);
  });
});
