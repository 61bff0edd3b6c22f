import { MaskedValue } from './masked-value';

/** A value read from the server, as text; objects and lists as JSON. */
function ValueView({ name, value, sensitive }: { name: string; value: unknown; sensitive: boolean }) {
  const text = typeof value === 'string' ? value : value === null || value === undefined ? '' : JSON.stringify(value, null, 2);
  if (sensitive && text !== '') return <MaskedValue value={text} label={name} />;
  if (typeof value === 'object' && value !== null) return <pre class="json">{text}</pre>;
  return <span class="value">{text}</span>;
}

/** Names whose values are secret whatever the description says (values read back carry no schema). */
const ALWAYS_SENSITIVE = /^(password|secret_id|client_token|token|private_key|secret_key|key|signed_key|plaintext|bindpass|root_password|otp|last_password)$/;

const isSensitiveName = (name: string, declared: Set<string>) => declared.has(name) || ALWAYS_SENSITIVE.test(name);

/** A read response's data as a description list. */
export function DataView({ data, sensitive }: { data: Record<string, unknown>; sensitive: Set<string> }) {
  const entries = Object.entries(data);
  if (!entries.length) return <p>No data.</p>;
  return (
    <dl class="data">
      {entries.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>
            <ValueView name={k} value={v} sensitive={isSensitiveName(k, sensitive)} />
          </dd>
        </div>
      ))}
    </dl>
  );
}
