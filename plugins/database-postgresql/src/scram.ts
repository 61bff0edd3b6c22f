/**
 * A SCRAM-SHA-256 verifier (RFC 5802/7677, PostgreSQL's stored form
 * `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`), for
 * password_authentication = scram-sha-256: the plain password then never
 * reaches the database server, not even inside a statement.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';

const ITERATIONS = 4096;

export function scramSha256Verifier(password: string, salt: Buffer = randomBytes(16), iterations = ITERATIONS): string {
  // SASLprep is the identity for the printable ASCII passwords the engine generates.
  const salted = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}
