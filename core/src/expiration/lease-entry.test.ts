import { DUE_INDEX_PREFIX, dueIndexKey, makeLeaseId, parseDueIndexKey } from './lease-entry.js';

const lease = (over: Partial<Parameters<typeof dueIndexKey>[0]> = {}) => ({
  leaseId: 'database/creds/app/AbCdEfGhIjKlMnOpQrStUvWx',
  expireTime: 1_764_000_000_123,
  irrevocableReason: null as string | null,
  mountPath: 'database/',
  mountUuid: 'db-uuid_1',
  ...over,
});

describe('due-index keys', () => {
  it('round-trips every field, the quota role and a namespaced lease id included', () => {
    const nsId = makeLeaseId('auth/approle/', 'login', 'Ns1');
    const cases = [
      lease(),
      lease({ irrevocableReason: 'backend said no' }),
      lease({ quotaRole: 'web role/ü' }),
      lease({ leaseId: nsId, mountPath: 'auth/approle/', mountUuid: 'ar', quotaRole: 'r1', expireTime: 0 }),
    ];
    for (const l of cases) {
      expect(parseDueIndexKey(dueIndexKey(l))).toEqual({
        leaseId: l.leaseId,
        expireTime: l.expireTime,
        irrevocable: l.irrevocableReason !== null,
        mountPath: l.mountPath,
        mountUuid: l.mountUuid,
        namespaceId: l.leaseId === nsId ? 'Ns1' : '',
        ...(l.quotaRole ? { quotaRole: l.quotaRole } : {}),
      });
    }
  });

  it('parses a stale key of the same lease (an earlier state) to its own fields', () => {
    const current = parseDueIndexKey(dueIndexKey(lease({ expireTime: 2_000 })));
    const stale = parseDueIndexKey(dueIndexKey(lease({ expireTime: 1_000, irrevocableReason: 'x' })));
    expect(stale?.leaseId).toBe(current?.leaseId);
    expect([stale?.expireTime, stale?.irrevocable, current?.expireTime, current?.irrevocable]).toEqual([1_000, true, 2_000, false]);
  });

  it('rejects keys not shaped like one', () => {
    const id = 'database/creds/app/AbCd';
    const bad = [
      `sys/expire/id/root/${id}`,
      `${DUE_INDEX_PREFIX}/1,0,9,u`,
      `${DUE_INDEX_PREFIX}${id}/1,0,9`,
      `${DUE_INDEX_PREFIX}${id}/1,0,9,u,r,x`,
      `${DUE_INDEX_PREFIX}${id}/,0,9,u`,
      `${DUE_INDEX_PREFIX}${id}/abc,0,9,u`,
      `${DUE_INDEX_PREFIX}${id}/1,2,9,u`,
      `${DUE_INDEX_PREFIX}${id}/1,00,9,u`,
      `${DUE_INDEX_PREFIX}${id}/1,,9,u`,
      `${DUE_INDEX_PREFIX}${id}/1,0,,u`,
      `${DUE_INDEX_PREFIX}${id}/1,0,0,u`,
      `${DUE_INDEX_PREFIX}${id}/1,0,1.5,u`,
      `${DUE_INDEX_PREFIX}${id}/1,0,${id.length},u`,
      `${DUE_INDEX_PREFIX}${id}/1,0,9,`,
      `${DUE_INDEX_PREFIX}${id}/1,0,9,u.v`,
      `${DUE_INDEX_PREFIX}${id}/1,0,9,u,`,
      `${DUE_INDEX_PREFIX}${id}/1,0,9,u,r+`,
    ];
    for (const key of bad) expect([key, parseDueIndexKey(key)]).toEqual([key, null]);
    expect(parseDueIndexKey(`${DUE_INDEX_PREFIX}${id}/1,0,9,u`)).not.toBeNull();
  });
});
