/** Reads a stopped server's LevelDB store directly, to check what it keeps (a file of its own, so only the tests that look load `level`). */
import { Level } from 'level';

/** Every key of a stopped server's LevelDB store at `path` (keys are plain text; values stay sealed). */
export async function levelStorageKeys(path: string): Promise<string[]> {
  const db = new Level<string, Buffer>(path, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
  await db.open();
  try {
    return await db.keys().all();
  } finally {
    await db.close();
  }
}
