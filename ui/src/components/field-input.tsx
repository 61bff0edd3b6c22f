/**
 * One generated form control for a described field: its label is the field's
 * name exactly (the required mark and the description stay outside the
 * accessible name, as hint text tied by aria-describedby), and the server's
 * message about it is shown beside it.
 */
import type { Field } from '../api/openapi';

export type FieldValue = string | boolean;

let seq = 0;
export const newId = (prefix: string) => `${prefix}-${++seq}`;

/** The value a control starts with, from a value read back or the field's default. */
export function initialValue(f: Field, current: unknown): FieldValue {
  const v = current !== undefined ? current : f.default;
  if (f.kind === 'boolean') return v === true || v === 'true' || v === 1;
  if (v === undefined || v === null) return '';
  if (f.kind === 'array') return Array.isArray(v) ? v.join('\n') : String(v);
  if (f.kind === 'object' || f.kind === 'any') return typeof v === 'string' ? v : JSON.stringify(v, null, 2);
  return String(v);
}

/** The JSON value to send, or undefined to leave the field out (an empty optional control). */
export function wireValue(f: Field, v: FieldValue): unknown {
  if (f.kind === 'boolean') return v === true;
  const s = String(v);
  if (s.trim() === '') return undefined;
  if (f.kind === 'array') return s.split(/\n|,/).map((x) => x.trim()).filter(Boolean);
  if (f.kind === 'integer' || f.kind === 'number') return /^-?\d+(\.\d+)?$/.test(s.trim()) ? Number(s) : s;
  if (f.kind === 'object' || f.kind === 'any') {
    try {
      return JSON.parse(s);
    } catch {
      return s;
    }
  }
  return s;
}

export function FieldInput({ field, id, value, onChange, error }: { field: Field; id: string; value: FieldValue; onChange: (v: FieldValue) => void; error?: string | undefined }) {
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [field.description ? hintId : '', error ? errorId : ''].filter(Boolean).join(' ') || undefined;
  const common = { id, name: field.name, 'aria-describedby': describedBy, 'aria-invalid': error ? true : undefined, required: field.required };
  let control;
  if (field.kind === 'boolean') {
    control = <input type="checkbox" {...common} required={false} checked={value === true} onChange={(e) => onChange((e.currentTarget as HTMLInputElement).checked)} />;
  } else if (field.kind === 'enum') {
    control = (
      <select {...common} value={String(value)} onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value)}>
        {!field.required && <option value="">(default)</option>}
        {field.options!.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    );
  } else if (field.kind === 'array' || field.kind === 'object' || field.kind === 'any') {
    control = <textarea {...common} rows={field.kind === 'array' ? 3 : 5} value={String(value)} onInput={(e) => onChange((e.currentTarget as HTMLTextAreaElement).value)} />;
  } else {
    control = (
      <input
        type={field.sensitive ? 'password' : 'text'}
        inputMode={field.kind === 'integer' || field.kind === 'number' ? 'numeric' : undefined}
        autoComplete={field.sensitive ? 'new-password' : 'off'}
        spellcheck={false}
        {...common}
        value={String(value)}
        onInput={(e) => onChange((e.currentTarget as HTMLInputElement).value)}
      />
    );
  }
  return (
    <div class={`field${field.kind === 'boolean' ? ' checkbox' : ''}`}>
      <span class="label-row">
        <label for={id}>{field.name}</label>
        {field.required && (
          <span class="required" aria-hidden="true" title="required">
            *
          </span>
        )}
      </span>
      {control}
      {field.description && (
        <small id={hintId} class="hint">
          {field.description}
          {field.kind === 'array' ? ' (one per line)' : ''}
          {field.deprecated ? ' (deprecated)' : ''}
        </small>
      )}
      {error && (
        <p role="alert" class="error field-error" id={errorId}>
          {error}
        </p>
      )}
    </div>
  );
}
