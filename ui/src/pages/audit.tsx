/** Audit devices: list, enable (type, path, options), disable. */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client';
import { announce } from '../components/announcer';
import { ConfirmButton } from '../components/confirm-button';
import { ErrorMessage } from '../components/error-message';
import { formatKeyValues, parseKeyValues } from '../components/key-values';

interface Device {
  type: string;
  description: string;
  options: Record<string, string>;
  path: string;
}

export function AuditPage() {
  const [devices, setDevices] = useState<Device[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  const [type, setType] = useState('file');
  const [path, setPath] = useState('');
  const [description, setDescription] = useState('');
  const [options, setOptions] = useState('file_path=stdout');
  useEffect(() => {
    api.read<Record<string, Device>>('sys/audit').then((r) => setDevices(Object.entries(r.data ?? {}).map(([p, d]) => ({ ...d, path: p }))), setError);
  }, [tick]);
  const enable = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const p = (path.trim() || type).replace(/^\/+|\/+$/g, '');
    try {
      await api.put(`sys/audit/${p}`, { type, description, options: parseKeyValues(options) });
      announce(`Audit device ${p}/ enabled`);
      setPath('');
      setTick(tick + 1);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section>
      <h1>Audit devices</h1>
      <ErrorMessage error={error} />
      {devices && devices.length === 0 && <p>No audit device is enabled: requests are not audited.</p>}
      {devices && devices.length > 0 && (
        <table>
          <caption>Enabled</caption>
          <thead>
            <tr>
              <th scope="col">Path</th>
              <th scope="col">Type</th>
              <th scope="col">Options</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {devices.map((d) => (
              <tr key={d.path}>
                <th scope="row">{d.path}</th>
                <td>{d.type}</td>
                <td>{formatKeyValues(d.options)}</td>
                <td>
                  <ConfirmButton
                    label="Disable"
                    name={`Disable ${d.path}`}
                    onConfirm={async () => {
                      try {
                        await api.delete(`sys/audit/${d.path}`);
                        announce(`Audit device ${d.path} disabled`);
                        setTick(tick + 1);
                      } catch (err) {
                        setError(err);
                      }
                    }}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form class="card" onSubmit={enable} aria-label="Enable an audit device">
        <h2>Enable an audit device</h2>
        <div class="field">
          <label for="audit-type">Type</label>
          <select id="audit-type" value={type} onChange={(e) => setType((e.currentTarget as HTMLSelectElement).value)}>
            <option>file</option>
            <option>socket</option>
            <option>syslog</option>
          </select>
        </div>
        <div class="field">
          <label for="audit-path">Path</label>
          <input id="audit-path" placeholder={type} value={path} onInput={(e) => setPath((e.currentTarget as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="audit-description">Description</label>
          <input id="audit-description" value={description} onInput={(e) => setDescription((e.currentTarget as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="audit-options">Options</label>
          <textarea id="audit-options" rows={2} aria-describedby="audit-options-hint" value={options} onInput={(e) => setOptions((e.currentTarget as HTMLTextAreaElement).value)} />
          <small id="audit-options-hint" class="hint">
            One key=value per line: file_path for file (a path, stdout or discard), address and socket_type for socket, tag and facility for syslog.
          </small>
        </div>
        <div class="actions">
          <button type="submit">Enable</button>
        </div>
      </form>
    </section>
  );
}
