import { messageOf } from '../api/client';

/** A failed request's server message, announced (role="alert"). */
export function ErrorMessage({ error, id }: { error: unknown; id?: string }) {
  if (error === null || error === undefined || error === '') return null;
  return (
    <p role="alert" class="error" id={id}>
      {typeof error === 'string' ? error : messageOf(error)}
    </p>
  );
}
