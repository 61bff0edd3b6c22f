#!/usr/bin/env node
/**
 * The `strongroom` binary: `server` runs the core; every other command is a
 * client of the HTTP API, following the Vault CLI (core/src/cli/commands.ts).
 */
import { parseArgs, UsageError, type FlagSpec } from './args.js';
import { COMMANDS, groupHelp, resolveCommand, runClientCommand } from './commands.js';
import { helpText, type Command } from './command.js';

export const SERVER_FLAGS: FlagSpec = {
  config: { kind: 'string', help: 'The configuration file (HCL or JSON).' },
  dev: { kind: 'bool', help: 'Development mode: in-process, initialized, unsealed, root token printed. Never in production.' },
  'dev-listen-address': { kind: 'string', help: 'Dev listener address (default 127.0.0.1:8200).' },
  'dev-root-token-id': { kind: 'string', help: 'Dev root token value.' },
  'dev-data-dir': { kind: 'string', help: 'Dev data directory kept across restarts (default: a fresh temporary one).' },
  'dev-plugin-dir': { kind: 'string', help: 'Dev plugin directory.' },
  'log-level': { kind: 'string', help: 'trace, debug, info, warn or error (overrides the config).' },
  'log-format': { kind: 'string', help: 'standard or json (overrides the config).' },
};

const SERVER: Command = {
  usage: '[options]',
  synopsis: 'Run the server: -dev for a development server, -config=FILE for a real one (it starts sealed).',
  flags: SERVER_FLAGS,
  output: false,
  async run() {},
};

function usage(): string {
  const names = ['server', 'version', ...Object.keys(COMMANDS)].sort();
  const tops = [...new Set(names.map((n) => n.split(' ')[0]!))];
  const lines = tops.map((t) => {
    const subs = names.filter((n) => n.startsWith(`${t} `)).map((n) => n.slice(t.length + 1));
    return `    ${t.padEnd(11)}${subs.length ? subs.join(', ') : ''}`;
  });
  return [
    'Usage: strongroom <command> [options] [args]',
    '',
    'Commands (`strongroom <command> -h` for each):',
    ...lines,
    '',
    'Environment: STRONGROOM_ADDR, STRONGROOM_TOKEN, STRONGROOM_NAMESPACE, STRONGROOM_CACERT,',
    'STRONGROOM_SKIP_VERIFY, STRONGROOM_FORMAT (the VAULT_* names are read too).',
    'Exit codes: 0 success, 1 usage or local error, 2 error from the server (status: 2 = sealed).',
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const out = (s: string) => void process.stdout.write(`${s}\n`);
  const err = (s: string) => void process.stderr.write(`${s}\n`);
  const [first] = argv;
  if (!first || ['-h', '-help', '--help', 'help'].includes(first)) {
    (first ? out : err)(usage());
    return first ? 0 : 1;
  }
  if (first === 'version' || first === '-version' || first === '--version' || first === '-v') {
    out(`Strongroom v${require('../../package.json').version}`);
    return 0;
  }
  if (first === 'server') {
    let args;
    try {
      args = parseArgs(argv.slice(1), SERVER_FLAGS);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      err(`${e.message}\n\n${helpText('server', SERVER)}`);
      return 1;
    }
    if (args.help) {
      out(helpText('server', SERVER));
      return 0;
    }
    if (args.positionals.length) {
      err(`Too many arguments: ${args.positionals.join(' ')}\n\n${helpText('server', SERVER)}`);
      return 1;
    }
    // Loaded only here: client commands should not pay for loading the whole server.
    const { runServer } = require('./server.js') as typeof import('./server.js');
    await runServer(args);
    return -1; // keeps running
  }
  const { name, rest, kind } = resolveCommand(argv);
  if (kind === 'group') {
    const asked = rest.some((a) => ['-h', '-help', '--help'].includes(a));
    if (!asked && rest.length) err(`Unknown subcommand: ${name} ${rest[0]}\n`);
    (asked ? out : err)(groupHelp(name));
    return asked ? 0 : 1;
  }
  if (kind === 'unknown') {
    err(`Unknown command: ${name}\n\n${usage()}`);
    return 1;
  }
  return runClientCommand(name, rest, out, err);
}

/** Runs the command line and sets the exit code (core/bin/strongroom.js and `node dist/cli/main.js`). */
export function run(argv: string[]): void {
  // `strongroom kv get ... | head` closes the pipe early: that is the reader's choice, not a crash.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
  main(argv).then(
    (code) => {
      if (code >= 0) process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`Error: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}

if (require.main === module) run(process.argv.slice(2));
