/**
 * The registry of client commands (every verb but `server`) and the runner:
 * parse the command's own flags (help first, unknown flags refused), check the
 * argument count, call the API, map failures to Vault's exit codes.
 */
import { parseArgs, UsageError } from './args.js';
import { clientOptionsFromEnv, ConnectionError, createClient, CurlString, WrappedResponse } from './client.js';
import { checkCount, CliError, flagsOf, helpText, printResponse, type Command, type Ctx } from './command.js';
import { formatOf, type Out } from './output.js';
import { genericVerbs } from './verbs-generic.js';
import { kvVerbs } from './verbs-kv.js';
import { operatorVerbs } from './verbs-operator.js';
import { auditVerbs } from './verbs-audit.js';
import { authVerbs } from './verbs-auth.js';
import { debugVerbs } from './verbs-debug.js';
import { eventVerbs } from './verbs-events.js';
import { leaseVerbs } from './verbs-lease.js';
import { namespaceVerbs } from './verbs-namespace.js';
import { pluginVerbs } from './verbs-plugin.js';
import { policyVerbs } from './verbs-policy.js';
import { secretsVerbs } from './verbs-secrets.js';
import { tokenVerbs } from './verbs-token.js';

;

export const COMMANDS: Record<string, Command> = {
  ...genericVerbs,
  ...kvVerbs,
  ...tokenVerbs,
  ...secretsVerbs,
  ...authVerbs,
  ...auditVerbs,
  ...policyVerbs,
  ...pluginVerbs,
  ...leaseVerbs,
  ...namespaceVerbs,
  ...operatorVerbs,
  ...debugVerbs,
  ...eventVerbs,
};

/** Words that only group subcommands (`kv`, `kv metadata`, `token`...). */
const GROUPS: ReadonlySet<string> = new Set(
  Object.keys(COMMANDS).flatMap((name) => {
    const words = name.split(' ');
    return words.slice(1).map((_, i) => words.slice(0, i + 1).join(' '));
  }),
);

/** The longest command or group named by the leading words of argv. */
export function resolveCommand(argv: string[]): { name: string; rest: string[]; kind: 'command' | 'group' | 'unknown' } {
  for (let n = Math.min(3, argv.length); n >= 1; n--) {
    const name = argv.slice(0, n).join(' ');
    if (COMMANDS[name]) return { name, rest: argv.slice(n), kind: 'command' };
    if (GROUPS.has(name)) return { name, rest: argv.slice(n), kind: 'group' };
  }
  return { name: argv[0] ?? '', rest: argv.slice(1), kind: 'unknown' };
}

export function groupHelp(group: string): string {
  const subs = Object.keys(COMMANDS)
    .filter((c) => c.startsWith(`${group} `))
    .sort();
  const width = Math.max(...subs.map((s) => s.length - group.length - 1));
  return [`Usage: strongroom ${group} <subcommand> [options] [args]`, '', 'Subcommands:', ...subs.map((s) => `    ${s.slice(group.length + 1).padEnd(width)}    ${COMMANDS[s]!.synopsis.split('. ')[0]!.replace(/\.$/, '')}`)].join('\n');
}

/** Runs one client command; returns the exit code. */
export async function runClientCommand(name: string, argv: string[], out: Out, err: Out): Promise<number> {
  const cmd = COMMANDS[name];
  if (!cmd) {
    err(`Unknown command: ${name}`);
    return 1;
  }
  let client: ReturnType<typeof createClient> | undefined;
  let ctx: Ctx | undefined;
  try {
    const args = parseArgs(argv, flagsOf(cmd));
    if (args.help) {
      out(helpText(name, cmd));
      return 0;
    }
    checkCount(name, cmd, args.positionals.length);
    const format = cmd.output === false ? 'table' : formatOf(args.flags.get('format'));
    client = createClient(clientOptionsFromEnv(args.flags));
    ctx = { args, client, out, err, format, field: cmd.output === false ? undefined : args.flags.get('field') };
    await cmd.run(ctx);
    return 0;
  } catch (e) {
    if (e instanceof WrappedResponse && ctx) {
      // -wrap-ttl: whatever the verb does with an answer, the answer is now a wrapping token.
      printResponse(ctx, e.result);
      return 0;
    }
    if (e instanceof CurlString) {
      out(e.message);
      return 0;
    }
    if (e instanceof UsageError) {
      err(`${e.message}\n\n${helpText(name, cmd)}`);
      return 1;
    }
    if (e instanceof CliError) {
      if (e.message) err(e.message);
      return e.exitCode;
    }
    if (e instanceof ConnectionError) {
      err(`Error: ${e.message}`);
      return 2;
    }
    err(`Error: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  } finally {
    client?.close();
  }
}
