#!/usr/bin/env node
/**
 * The `strongroom` binary: `server` runs the core; every other command is a
 * client of the HTTP API, following the Vault CLI.
 */
import { parseArgs } from './args.js';
import { CliError, COMMANDS, runClientCommand } from './commands.js';
import { runServer } from './server.js';

const BOOLEAN_FLAGS = new Set(['dev', 'reset', 'self', 'accessor', 'orphan', 'tls-skip-verify', 'help', 'h']);

function usage(): string {
  const cmds = ['server', ...Object.keys(COMMANDS)].sort();
  return `Usage: strongroom <command> [args]\n\nCommands:\n${cmds.map((c) => `    ${c}`).join('\n')}\n\nEnvironment: STRONGROOM_ADDR, STRONGROOM_TOKEN, STRONGROOM_NAMESPACE, STRONGROOM_CACERT, STRONGROOM_SKIP_VERIFY`;
}

export async function main(argv: string[]): Promise<number> {
  const [first, second] = argv;
  if (!first || first === '-h' || first === '--help' || first === 'help') {
    process.stdout.write(`${usage()}\n`);
    return first ? 0 : 1;
  }
  if (first === 'version' || first === '-version' || first === '--version') {
    process.stdout.write(`Strongroom v${require('../../package.json').version}\n`);
    return 0;
  }
  if (first === 'server') {
    await runServer(parseArgs(argv.slice(1), BOOLEAN_FLAGS));
    return -1; // keeps running
  }
  const two = second ? `${first} ${second}` : '';
  const name = two && COMMANDS[two] ? two : first;
  const rest = argv.slice(name === two ? 2 : 1);
  try {
    await runClientCommand(name, parseArgs(rest, BOOLEAN_FLAGS), (s) => process.stdout.write(`${s}\n`));
    return 0;
  } catch (err) {
    if (err instanceof CliError) {
      if (err.message) process.stderr.write(`${err.message}\n`);
      return err.exitCode;
    }
    process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
}

/** Runs the command line and sets the exit code (core/bin/strongroom.js and `node dist/cli/main.js`). */
export function run(argv: string[]): void {
  main(argv).then(
    (code) => {
      if (code >= 0) process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}

if (require.main === module) run(process.argv.slice(2));
