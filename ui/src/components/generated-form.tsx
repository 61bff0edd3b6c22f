/** A form generated from a write operation's fields, showing the server's 400 messages beside the fields they name. */
import { useMemo, useState } from 'preact/hooks';
import { ApiError, messageOf } from '../api/client';
import { fieldErrors, type Field } from '../api/openapi';
import { ErrorMessage } from './error-message';
import { FieldInput, initialValue, newId, wireValue, type FieldValue } from './field-input';

interface Props {
  fields: Field[];
  /** Values read back, to edit. */
  current?: Record<string, unknown> | undefined;
  submitLabel: string;
  onSubmit: (body: Record<string, unknown>) => Promise<void>;
}

export function GeneratedForm({ fields, current, submitLabel, onSubmit }: Props) {
  const ids = useMemo(() => Object.fromEntries(fields.map((f) => [f.name, newId(`f-${f.name}`)])), [fields]);
  const [values, setValues] = useState<Record<string, FieldValue>>(() => Object.fromEntries(fields.map((f) => [f.name, initialValue(f, current?.[f.name])])));
  const [errors, setErrors] = useState<{ byField: Record<string, string>; rest: string[] }>({ byField: {}, rest: [] });
  const [busy, setBusy] = useState(false);
  const [showOptional, setShowOptional] = useState(fields.length <= 8);

  const submit = async (e: Event) => {
    e.preventDefault();
    const body: Record<string, unknown> = {};
    for (const f of fields) {
      const v = wireValue(f, values[f.name] ?? '');
      // Unchanged defaults are left to the server: it knows them better than a form does.
      if (v === undefined) continue;
      if (current === undefined && f.default !== undefined && JSON.stringify(v) === JSON.stringify(f.default)) continue;
      body[f.name] = v;
    }
    setBusy(true);
    setErrors({ byField: {}, rest: [] });
    try {
      await onSubmit(body);
    } catch (err) {
      const messages = err instanceof ApiError ? err.errors : [messageOf(err)];
      setErrors(fieldErrors(messages, fields.map((f) => f.name)));
    } finally {
      setBusy(false);
    }
  };

  const shown = fields.filter((f) => showOptional || f.required || errors.byField[f.name] !== undefined);
  return (
    <form class="generated" onSubmit={submit} noValidate>
      {errors.rest.map((m) => (
        <ErrorMessage key={m} error={m} />
      ))}
      {shown.map((f) => (
        <FieldInput key={f.name} field={f} id={ids[f.name]!} value={values[f.name] ?? ''} error={errors.byField[f.name]} onChange={(v) => setValues({ ...values, [f.name]: v })} />
      ))}
      {!showOptional && (
        <button type="button" class="link" onClick={() => setShowOptional(true)}>
          Show all {fields.length} fields
        </button>
      )}
      <div class="actions">
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
      </div>
    </form>
  );
}
