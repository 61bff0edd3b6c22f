/**
 * LDIF (RFC 2849) for dynamic roles: the role's templates are rendered with
 * the credential's fields (kit template language plus utf16le), then parsed
 * into change records and run in order against the directory.
 *
 * Supported: comments, folded lines, `attr: value`, `attr:: base64`,
 * records separated by blank lines, `changetype` add (the default),
 * delete, modify (add/replace/delete blocks ended by `-`) and modrdn/moddn.
 * Creation stops at the first error (then the rollback runs); deletion and
 * rollback go on past errors.
 */
import { Attribute, Change, type Client } from 'ldapts';
import { badRequest, type CompiledTemplate, compileTemplate, utf16le } from '@strongroom/sdk-plugin';

export type LdifRecord =
  | { dn: string; changetype: 'add'; attributes: Array<{ type: string; values: Array<string | Buffer> }> }
  | { dn: string; changetype: 'delete' }
  | { dn: string; changetype: 'modify'; changes: Array<{ operation: 'add' | 'replace' | 'delete'; type: string; values: Array<string | Buffer> }> }
  | { dn: string; changetype: 'modrdn'; newrdn: string; deleteoldrdn: boolean; newsuperior: string };

/** The fields an LDIF template may use (spec: directory dynamic role templates). */
export interface LdifFields {
  Username: string;
  Password: string;
  RoleName: string;
  DisplayName: string;
  IssueTime: string;
  ExpirationTime: string;
  IssueTimeSeconds: number;
  ExpirationTimeSeconds: number;
}

export const SAMPLE_LDIF_FIELDS: LdifFields = {
  Username: 'v_sample_user',
  Password: 'sample-Password-1',
  RoleName: 'role',
  DisplayName: 'token',
  IssueTime: '2026-01-01T00:00:00Z',
  ExpirationTime: '2026-01-01T01:00:00Z',
  IssueTimeSeconds: 1767225600,
  ExpirationTimeSeconds: 1767229200,
};

// One object, so compileTemplate's cache serves every LDIF template.
const LDIF_FUNCTIONS = { utf16le };
export const compileLdif = (src: string, field: string): CompiledTemplate => compileTemplate(src, { field, extraFunctions: LDIF_FUNCTIONS });

/** Parses LDIF text; a syntax error is a 400 naming `field`. */
export function parseLdif(text: string, field: string): LdifRecord[] {
  const fail = (msg: string): never => {
    throw badRequest(`invalid ${field}: ${msg}`);
  };
  // Unfold: a line starting with one space continues the previous one.
  const lines: string[] = [];
  for (const raw of text.replace(/\r\n/g, '\n').split('\n')) {
    if (raw.startsWith(' ') && lines.length > 0 && lines[lines.length - 1] !== '') lines[lines.length - 1] += raw.slice(1);
    else lines.push(raw);
  }
  const blocks: Array<Array<[string, string | Buffer]>> = [];
  let cur: Array<[string, string | Buffer]> = [];
  for (const line of lines) {
    if (line.trim() === '') {
      if (cur.length) blocks.push(cur);
      cur = [];
      continue;
    }
    if (line.startsWith('#')) continue;
    if (line === '-') {
      cur.push(['-', '']);
      continue;
    }
    const m = /^([A-Za-z0-9][\w.;-]*)\s*:(:?)\s?(.*)$/.exec(line);
    if (!m) fail(`bad line ${JSON.stringify(line.slice(0, 40))}`);
    const [, name, b64, value] = m as unknown as [string, string, string, string];
    if (value.startsWith('<')) fail('URL values (attr:< url) are not supported');
    cur.push([name, b64 ? Buffer.from(value.trim(), 'base64') : value.trimEnd()]);
  }
  if (cur.length) blocks.push(cur);

  const str = (v: string | Buffer) => (Buffer.isBuffer(v) ? v.toString('utf8') : v);
  const records: LdifRecord[] = [];
  for (const block of blocks) {
    let i = 0;
    if (block[0]?.[0].toLowerCase() === 'version') i++;
    if (i >= block.length) continue;
    const [dnKey, dnValue] = block[i++]!;
    if (dnKey.toLowerCase() !== 'dn') fail('each record must start with dn:');
    const dn = str(dnValue).trim();
    if (!dn) fail('empty dn');
    let changetype = 'add';
    if (block[i]?.[0].toLowerCase() === 'changetype') changetype = str(block[i++]![1]).trim().toLowerCase();
    const rest = block.slice(i);
    switch (changetype) {
      case 'add': {
        const attrs = new Map<string, { type: string; values: Array<string | Buffer> }>();
        for (const [k, v] of rest) {
          if (k === '-') fail(`"-" outside a modify record (${dn})`);
          const key = k.toLowerCase();
          if (!attrs.has(key)) attrs.set(key, { type: k, values: [] });
          attrs.get(key)!.values.push(v);
        }
        if (attrs.size === 0) fail(`add record without attributes (${dn})`);
        records.push({ dn, changetype: 'add', attributes: [...attrs.values()] });
        break;
      }
      case 'delete':
        if (rest.length) fail(`delete record with attributes (${dn})`);
        records.push({ dn, changetype: 'delete' });
        break;
      case 'modify': {
        const changes: Array<{ operation: 'add' | 'replace' | 'delete'; type: string; values: Array<string | Buffer> }> = [];
        let open: (typeof changes)[number] | null = null;
        for (const [k, v] of rest) {
          if (k === '-') {
            if (!open) fail(`"-" without a change (${dn})`);
            open = null;
            continue;
          }
          if (!open) {
            const op = k.toLowerCase();
            if (op !== 'add' && op !== 'replace' && op !== 'delete') fail(`modify record expects add:, replace: or delete:, got ${k}: (${dn})`);
            open = { operation: op as 'add' | 'replace' | 'delete', type: str(v).trim(), values: [] };
            changes.push(open);
            continue;
          }
          if (k.toLowerCase() !== open.type.toLowerCase()) fail(`value of ${k} inside the change of ${open.type} (${dn})`);
          open.values.push(v);
        }
        if (changes.length === 0) fail(`modify record without changes (${dn})`);
        records.push({ dn, changetype: 'modify', changes });
        break;
      }
      case 'modrdn':
      case 'moddn': {
        const get = (name: string) => rest.find(([k]) => k.toLowerCase() === name)?.[1];
        const newrdn = get('newrdn');
        if (newrdn === undefined) fail(`modrdn record without newrdn (${dn})`);
        records.push({ dn, changetype: 'modrdn', newrdn: str(newrdn!), deleteoldrdn: str(get('deleteoldrdn') ?? '1').trim() === '1', newsuperior: str(get('newsuperior') ?? '') });
        break;
      }
      default:
        fail(`unknown changetype ${changetype} (${dn})`);
    }
  }
  return records;
}

const values = (vs: Array<string | Buffer>): string[] | Buffer[] => (vs.some(Buffer.isBuffer) ? vs.map((v) => (Buffer.isBuffer(v) ? v : Buffer.from(v, 'utf8'))) : (vs as string[]));

/** Runs one record. */
export async function applyRecord(client: Client, r: LdifRecord): Promise<void> {
  switch (r.changetype) {
    case 'add':
      await client.add(
        r.dn,
        r.attributes.map((a) => new Attribute({ type: a.type, values: values(a.values) })),
      );
      return;
    case 'delete':
      await client.del(r.dn);
      return;
    case 'modify':
      await client.modify(
        r.dn,
        r.changes.map((c) => new Change({ operation: c.operation, modification: new Attribute({ type: c.type, values: values(c.values) }) })),
      );
      return;
    case 'modrdn': {
      const parent = r.newsuperior || r.dn.slice(r.dn.indexOf(',') + 1);
      await client.modifyDN(r.dn, `${r.newrdn},${parent}`);
      return;
    }
  }
}

const BASE64_INPUT = /^[A-Za-z0-9+/\r\n]+={0,2}\s*$/;

/**
 * Vault accepts LDIF fields base64-encoded: a value that is entirely base64
 * and decodes to UTF-8 text is taken decoded (plain LDIF always holds a colon,
 * which base64 never does).
 */
export function decodeMaybeBase64(v: string): string {
  const s = v.trim();
  if (s === '' || !BASE64_INPUT.test(s)) return v;
  const compact = s.replace(/\s+/g, '');
  if (compact.length % 4 !== 0) return v;
  const buf = Buffer.from(compact, 'base64');
  const text = buf.toString('utf8');
  return Buffer.from(text, 'utf8').equals(buf) && text.includes(':') ? text : v;
}
