/**
 * transit: a playground for encrypt, decrypt, sign and verify on text or
 * base64, beside the generated pages of its keys and other paths.
 */
import { useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api } from '../api/client';
import { apiPathOf, type MountInfo } from '../api/mounts';
import { announce } from '../components/announcer';
import { ErrorMessage } from '../components/error-message';
import { GeneratedMount, hrefOf } from './generated';

const toBase64 = (text: string) => {
  const bytes = new TextEncoder().encode(text);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
};
const fromBase64 = (b64: string): string | null => {
  try {
    const bin = atob(b64);
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
  } catch {
    return null;
  }
};

type Op = 'encrypt' | 'decrypt' | 'sign' | 'verify';

export function TransitPage({ mount, sub }: { mount: MountInfo; sub: string }) {
  if (sub !== '') return <GeneratedMount mount={mount} apiPath={apiPathOf(mount)} sub={sub} />;
  return <Playground mount={mount} />;
}

function Playground({ mount }: { mount: MountInfo }) {
  const [keys, setKeys] = useState<string[]>([]);
  const [listError, setListError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  const [keyName, setKeyName] = useState('');
  const [newKey, setNewKey] = useState('');
  const [newType, setNewType] = useState('aes256-gcm96');
  const [op, setOp] = useState<Op>('encrypt');
  const [format, setFormat] = useState<'text' | 'base64'>('text');
  const [input, setInput] = useState('');
  const [signature, setSignature] = useState('');
  const [result, setResult] = useState<{ label: string; value: string; text?: string | null } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [createError, setCreateError] = useState<unknown>(null);

  useEffect(() => {
    api.list(`${mount.path}keys`).then(
      (r) => {
        setKeys(r.keys);
        setKeyName((k) => k || r.keys[0] || '');
      },
      setListError,
    );
  }, [mount.path, tick]);

  const createKey = async (e: Event) => {
    e.preventDefault();
    setCreateError(null);
    try {
      await api.write(`${mount.path}keys/${encodeURIComponent(newKey.trim())}`, { type: newType });
      announce(`Key ${newKey.trim()} created`);
      setKeyName(newKey.trim());
      setNewKey('');
      setTick(tick + 1);
    } catch (err) {
      setCreateError(err);
    }
  };

  const run = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setResult(null);
    const k = encodeURIComponent(keyName);
    const payload = () => (format === 'text' ? toBase64(input) : input.trim());
    try {
      if (op === 'encrypt') {
        const r = await api.write<{ ciphertext: string }>(`${mount.path}encrypt/${k}`, { plaintext: payload() });
        setResult({ label: 'Ciphertext', value: (r as { data?: { ciphertext: string } }).data?.ciphertext ?? '' });
      } else if (op === 'decrypt') {
        const r = await api.write<{ plaintext: string }>(`${mount.path}decrypt/${k}`, { ciphertext: input.trim() });
        const b64 = (r as { data?: { plaintext: string } }).data?.plaintext ?? '';
        setResult({ label: 'Plaintext', value: b64, text: fromBase64(b64) });
      } else if (op === 'sign') {
        const r = await api.write<{ signature: string }>(`${mount.path}sign/${k}`, { input: payload() });
        setResult({ label: 'Signature', value: (r as { data?: { signature: string } }).data?.signature ?? '' });
      } else {
        const r = await api.write<{ valid: boolean }>(`${mount.path}verify/${k}`, { input: payload(), signature: signature.trim() });
        setResult({ label: 'Valid', value: String((r as { data?: { valid: boolean } }).data?.valid ?? false) });
      }
      announce(`${op[0]!.toUpperCase()}${op.slice(1)} done`);
    } catch (err) {
      setError(err);
    }
  };

  const inputLabel = op === 'decrypt' ? 'Ciphertext' : op === 'encrypt' ? 'Plaintext' : 'Input';
  return (
    <section>
      <h1>{mount.path}</h1>
      <p>transit secrets engine{mount.description ? `: ${mount.description}` : ''}</p>
      <section aria-labelledby="keys-title">
        <h2 id="keys-title">Keys</h2>
        <ErrorMessage error={listError} />
        {keys.length === 0 ? (
          <p>No keys yet.</p>
        ) : (
          <ul class="keys" aria-label="Keys">
            {keys.map((k) => (
              <li key={k}>
                <Link href={hrefOf(mount, `keys/${k}`)}>{k}</Link>
              </li>
            ))}
          </ul>
        )}
        <form class="inline" aria-label="Create key" onSubmit={createKey}>
          <label>
            <span>Key name</span>
            <input aria-label="Key name" required value={newKey} onInput={(e) => setNewKey((e.currentTarget as HTMLInputElement).value)} />
          </label>
          <label>
            <span>Key type</span>
            <select aria-label="Key type" value={newType} onChange={(e) => setNewType((e.currentTarget as HTMLSelectElement).value)}>
              {['aes256-gcm96', 'aes128-gcm96', 'chacha20-poly1305', 'ed25519', 'ecdsa-p256', 'rsa-2048', 'hmac'].map((t) => (
                <option key={t}>{t}</option>
              ))}
            </select>
          </label>
          <button type="submit">Create key</button>
        </form>
        <ErrorMessage error={createError} />
      </section>
      <section aria-labelledby="playground-title">
        <h2 id="playground-title">Playground</h2>
        <form onSubmit={run}>
          <div class="toolbar">
            <label>
              <span>Key</span>
              <select aria-label="Key" value={keyName} onChange={(e) => setKeyName((e.currentTarget as HTMLSelectElement).value)}>
                {keys.map((k) => (
                  <option key={k}>{k}</option>
                ))}
              </select>
            </label>
            <label>
              <span>Operation</span>
              <select aria-label="Operation"
                value={op}
                onChange={(e) => {
                  setOp((e.currentTarget as HTMLSelectElement).value as Op);
                  setResult(null);
                }}
              >
                <option value="encrypt">Encrypt</option>
                <option value="decrypt">Decrypt</option>
                <option value="sign">Sign</option>
                <option value="verify">Verify</option>
              </select>
            </label>
            {op !== 'decrypt' && (
              <fieldset class="radios">
                <legend>Input format</legend>
                <label>
                  <input type="radio" name="format" checked={format === 'text'} onChange={() => setFormat('text')} /> Text
                </label>
                <label>
                  <input type="radio" name="format" checked={format === 'base64'} onChange={() => setFormat('base64')} /> Base64
                </label>
              </fieldset>
            )}
          </div>
          <div class="field">
            <label for="transit-input">{inputLabel}</label>
            <textarea id="transit-input" rows={3} spellcheck={false} value={input} onInput={(e) => setInput((e.currentTarget as HTMLTextAreaElement).value)} />
          </div>
          {op === 'verify' && (
            <div class="field">
              <label for="transit-signature">Signature</label>
              <input id="transit-signature" value={signature} onInput={(e) => setSignature((e.currentTarget as HTMLInputElement).value)} />
            </div>
          )}
          <div class="actions">
            <button type="submit" disabled={!keyName}>
              {op[0]!.toUpperCase() + op.slice(1)}
            </button>
          </div>
        </form>
        <ErrorMessage error={error} />
        {result && (
          <section aria-label="Result" class="result">
            <h3>{result.label}</h3>
            <output aria-label={result.label}>{result.value}</output>
            {result.text !== undefined && (
              <>
                <h3>As text</h3>
                <output aria-label="Plaintext as text">{result.text ?? '(not UTF-8 text)'}</output>
              </>
            )}
          </section>
        )}
      </section>
      <p>
        <Link href={hrefOf(mount, 'keys/')}>Browse {mount.path}keys/</Link> (each key's own pages: read, configure, rotate, delete)
      </p>
    </section>
  );
}
