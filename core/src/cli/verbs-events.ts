/** `events subscribe TYPE`: the change events of sys/events/subscribe, one JSON object a line. */
import { commaList, ensureOk, type Command } from './command.js';

export const eventVerbs: Record<string, Command> = {
  'events subscribe': {
    usage: '[options] EVENT_TYPE',
    synopsis: 'Print change events as they happen (one JSON object a line), until interrupted or the server ends the stream.',
    help: [
      'EVENT_TYPE may use "*" globs: kv-v2/data-*, lease/*, *. Only events your token may read',
      'arrive (lease and mount events need sudo on sys/leases/lookup/). Notices come as lines',
      'too: {"event_type":"dropped","count":N} when events were lost because this reader was',
      'slow, {"event_type":"end",...} when the server ends the stream (a revoked token).',
    ].join('\n'),
    flags: { namespaces: { kind: 'list', help: 'A namespace below the current one to receive events from as well ("*" globs; comma-separated or repeated).' } },
    output: false,
    min: 1,
    max: 1,
    async run(ctx) {
      const namespaces = commaList(ctx, 'namespaces');
      let partial = '';
      const r = await ctx.client.stream(`sys/events/subscribe/${ctx.args.positionals[0]}`, namespaces.length ? { namespaces: namespaces.join(',') } : {}, (chunk) => {
        // Server-sent events: each `data:` line holds one event's JSON.
        const lines = (partial + chunk).split('\n');
        partial = lines.pop()!;
        for (const l of lines) if (l.startsWith('data: ')) ctx.out(l.slice(6));
      });
      ensureOk(r, 'subscribing to events');
    },
  },
};
