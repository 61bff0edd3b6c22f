/**
 * A secret the CLI needs (a token for `login`, a key share for `operator
 * unseal`) when no argument gives it. On a terminal: a prompt whose input is
 * never echoed, submitted by Enter, as Vault's CLI does. Otherwise (a pipe, a
 * file, or `-`): stdin, read whole. Either way the secret stays out of shell
 * history and `ps`.
 */
import { readSource } from './args.js';
import { CliError } from './command.js';

const ENTER = new Set(['\r', '\n']);
const ERASE = new Set(['\x7f', '\b']);
const INTERRUPT = '\x03';
const END_OF_INPUT = '\x04';

/** Reads one line from the terminal in raw mode, echoing nothing; Ctrl-C aborts, backspace erases. */
function readHidden(prompt: string, tty: NodeJS.ReadStream, out: NodeJS.WriteStream): Promise<string> {
  // Raw mode before the prompt: whatever is typed once the prompt shows is never echoed.
  tty.setRawMode(true);
  out.write(prompt);
  tty.setEncoding('utf8');
  tty.resume();
  let typed = '';
  return new Promise((resolve, reject) => {
    const finish = (err?: Error) => {
      tty.off('data', onData);
      tty.setRawMode(false);
      tty.pause();
      out.write('\n');
      if (err) reject(err);
      else resolve(typed);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ENTER.has(ch) || ch === END_OF_INPUT) return finish();
        if (ch === INTERRUPT) return finish(new CliError('Interrupted: nothing was sent', 1));
        if (ERASE.has(ch)) typed = typed.slice(0, -1);
        else if (ch >= ' ') typed += ch;
      }
    };
    tty.on('data', onData);
  });
}

/**
 * The secret from `given` (the command's argument), else hidden from the
 * terminal after `prompt`, else from stdin. `-` always means stdin.
 * `nonInteractive` (-non-interactive): a terminal is never prompted; that is an error.
 */
export async function readSecret(given: string | undefined, prompt: string, nonInteractive = false): Promise<string> {
  if (given !== undefined && given !== '-') return given.trim();
  if (given === undefined && process.stdin.isTTY) {
    if (nonInteractive) throw new CliError(`-non-interactive: ${prompt.replace(/ \(will be hidden\)/, '').replace(/:\s*$/, '')} needed, and no prompt is allowed: give it as an argument or on stdin`, 1);
    return (await readHidden(prompt, process.stdin, process.stderr)).trim();
  }
  return readSource('-').trim();
}
