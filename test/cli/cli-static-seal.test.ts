/**
 * The CLI with a static seal, against the real binary: `operator init
 * -recovery-shares/-recovery-threshold` prints recovery keys, `status` shows
 * the recovery seal, `operator rekey -target=recovery` rekeys them, and
 * `operator unseal -migrate` carries a Shamir server over to the static seal.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cliRunner, type CliResult } from '../helpers/cli';
import { waitFor } from '../helpers/processes';
import { restartConfigServer, scratchDir, startConfigServer, type RunningServer } from '../helpers/server';

jest.setTimeout(180_000);

const ok = (r: CliResult): CliResult => {
  if (r.code !== 0) throw new Error(`exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
};
const keyFile = join(scratchDir('sr-cli-seal-'), 'seal.key');
writeFileSync(keyFile, randomBytes(32).toString('hex'), { mode: 0o600 });
const BASE = 'storage "level" { path = "$DIR/data" }\nlistener "tcp" { address = "127.0.0.1:$PORT" tls_disable = true }\n';
const SEAL = `seal "static" {\n  current_key_id = "one"\n  current_key = "file://${keyFile}"\n}\n`;
const servers: RunningServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop('SIGKILL');
});

it('init prints recovery keys, status shows the recovery seal, rekey -target=recovery makes new ones', async () => {
  const s = await startConfigServer(BASE + SEAL);
  servers.push(s);
  const cli = cliRunner({ addr: s.url });
  const init = ok(await cli.run(['operator', 'init', '-recovery-shares=3', '-recovery-threshold=2']));
  const recovery = [...init.stdout.matchAll(/^Recovery Key \d: (\S+)$/gm)].map((m) => m[1]!);
  expect(recovery).toHaveLength(3);
  expect(init.stdout).not.toMatch(/^Unseal Key/m);
  const root = /Initial Root Token: (\S+)/.exec(init.stdout)![1]!;
  await waitFor('unsealed', async () => (await cli.run(['status'])).code === 0, 60_000);
  const st = ok(await cli.run(['status']));
  expect(st.stdout).toMatch(/Seal Type\s+static/);
  expect(st.stdout).toMatch(/Recovery Seal Type\s+shamir/);
  expect(st.stdout).toMatch(/Total Recovery Shares\s+3/);
  expect(st.stdout).toMatch(/Recovery Threshold\s+2/);

  const authed = cliRunner({ addr: s.url, token: root });
  const started = ok(await authed.run(['operator', 'rekey', '-target=recovery', '-init', '-key-shares=2', '-key-threshold=2', '-format=json']));
  const nonce = JSON.parse(started.stdout).nonce as string;
  ok(await authed.run(['operator', 'rekey', '-target=recovery', `-nonce=${nonce}`, recovery[0]!]));
  const done = ok(await authed.run(['operator', 'rekey', '-target=recovery', `-nonce=${nonce}`, recovery[2]!]));
  expect([...done.stdout.matchAll(/^Key \d: (\S+)$/gm)]).toHaveLength(2);
  expect(ok(await cli.run(['status'])).stdout).toMatch(/Total Recovery Shares\s+2/);
});

it('operator unseal -migrate moves a Shamir server to the static seal', async () => {
  const s = await startConfigServer(BASE);
  servers.push(s);
  const cli = cliRunner({ addr: s.url });
  const init = ok(await cli.run(['operator', 'init', '-key-shares=2', '-key-threshold=2']));
  const keys = [...init.stdout.matchAll(/^Unseal Key \d: (\S+)$/gm)].map((m) => m[1]!);
  await s.stop();
  writeFileSync(s.configFile, (BASE + SEAL).replace(/\$PORT/g, String(s.port)).replace(/\$DIR/g, dirname(s.configFile)));
  const next = await restartConfigServer(s as RunningServer & { configFile: string });
  servers.push(next);
  const pending = await cli.run(['status']);
  expect(pending.code).toBe(2);
  expect(pending.stdout).toMatch(/Seal Migration in Progress\s+true/);
  expect((await cli.run(['operator', 'unseal', keys[0]!])).stderr).toContain('-migrate');
  ok(await cli.run(['operator', 'unseal', '-migrate', keys[0]!]));
  const done = ok(await cli.run(['operator', 'unseal', '-migrate', keys[1]!]));
  expect(done.stdout).toMatch(/Sealed\s+false/);
  expect(done.stdout).toMatch(/Seal Type\s+static/);
});
