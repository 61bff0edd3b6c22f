/**
 * `login` and `operator unseal` with no argument (issue 26, finding 10): on a
 * terminal they prompt, never echo what is typed, and submit on Enter; with
 * stdin not a terminal they read it. Driven through a real pseudo-terminal.
 */
import { cliRunner, runInTerminal } from '../helpers/cli';
import { scratchDir, startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(180_000);

let s: RunningServer;
beforeAll(async () => {
  s = await startDevServer();
});
afterAll(async () => {
  await s.stop('SIGKILL');
});

const env = () => ({ HOME: scratchDir('sr-pty-home-'), STRONGROOM_ADDR: s.url });

it('login prompts on a terminal with hidden input and logs in on Enter', async () => {
  const created = await s.api('POST', 'auth/token/create', { policies: ['default'] });
  const token = created.body.auth.client_token as string;
  const r = await runInTerminal(['login', '-no-store', '-field=token_accessor'], 'Token (will be hidden): ', token, env());
  expect({ prompted: r.prompted, timedOut: r.timedOut, code: r.code }).toEqual({ prompted: true, timedOut: false, code: 0 });
  expect(r.screen).not.toContain(token);
  expect(r.screen).toContain(created.body.auth.accessor);
});

it('operator unseal prompts on a terminal with hidden input and unseals on Enter', async () => {
  expect((await s.api('PUT', 'sys/seal', {})).status).toBe(204);
  const r = await runInTerminal(['operator', 'unseal', '-format=json'], 'Unseal Key (will be hidden): ', s.unsealKey, env());
  expect({ prompted: r.prompted, timedOut: r.timedOut, code: r.code }).toEqual({ prompted: true, timedOut: false, code: 0 });
  expect(r.screen).not.toContain(s.unsealKey);
  expect((await s.api('GET', 'sys/seal-status', undefined, { token: null })).body.sealed).toBe(false);
});

it('reads stdin when it is not a terminal', async () => {
  const cli = cliRunner({ addr: s.url });
  const created = await s.api('POST', 'auth/token/create', { policies: ['default'] });
  const r = await cli.run(['login', '-no-store', '-field=token_accessor'], { token: null, input: `${created.body.auth.client_token}\n` });
  expect({ code: r.code, out: r.stdout.trim() }).toEqual({ code: 0, out: created.body.auth.accessor });
  expect(r.stderr).not.toContain('will be hidden');
});
