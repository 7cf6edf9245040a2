import { parseCommandArgs } from '../args.js';
import { type Command, EXIT, type ExitCode, type Io, UsageError } from '../io.js';
import { renderFrame } from '../watch/frame.js';
import { SOURCE_HELP } from '../watch/source.js';
import { untilSignal } from '../watch/timing.js';
import { FleetReader, type FleetView, SHOWN_KEYS } from '../watch/view.js';
import { openViewer, VIEWER_OPTIONS } from '../watch/viewer.js';

const HELP = `Usage: sluice top --redis <url> [--cluster] [--prefix <prefix>] [--interval 2s] [--keys 10]
       [--reveal <module>] [--once] [--json]

A live view of the fleet, like top: per rule the hottest keys (hashed counter tags) by requests and by
denials, requests, denials and shadow denials per second, the rules versions the gateways run (mixed versions
flagged), each gateway's store health and latency, and on a Redis Cluster each master's share of the script
calls (shard imbalance). It reads the boards the gateways publish (createLimiter's or the adapters' watch:
{publish: true}) and merges them: each count is within the stated bound (N/k) of the fleet's true count.

Options:
${SOURCE_HELP}
  --interval <d>        time between two frames (500ms, 2s, 1m); default 2s
  --keys <n>            keys shown per rule; default ${SHOWN_KEYS}
  --reveal <module>     a module exporting reveal(tag, rule): your own lookup from a tag to a name, called
                        for the shown tags only (nothing in clear is stored)
  --once                print one frame and exit (for scripts and tests)
  --json                with --once: the merged view as JSON
  -h, --help            show this help

Exit codes: 0 done (or stopped by a signal), 1 the store could not be read, 2 usage error, or ioredis or
@sluice/redis not installed.`;

/** `sluice top`; live, it stops when `stopping()` resolves (a signal; tests use --once). */
export async function runTop(
  args: readonly string[],
  io: Io,
  stopping: () => Promise<void>,
): Promise<ExitCode> {
  const parsed = parseCommandArgs(args, {
    ...VIEWER_OPTIONS,
    once: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  const once = parsed.values.once === true;
  if (parsed.values.json === true && !once) throw new UsageError('--json prints one view: give --once too');
  const viewer = await openViewer(parsed, 'top', io);
  if (typeof viewer === 'number') return viewer;
  const { source, reveal, keys, intervalMs } = viewer;
  const reader = new FleetReader(source, reveal, keys);
  let stopped = false;
  const stop = once ? Promise.resolve() : stopping();
  void stop.then(() => {
    stopped = true;
  });
  // A terminal gets each frame in place of the last; a pipe gets frames one after another.
  const clear = process.stdout.isTTY === true && !once ? '\u001b[H\u001b[2J' : '';
  try {
    do {
      if (!(await showFrame(reader, io, clear, parsed.values.json === true)) && once) return EXIT.findings;
      if (!once) await Promise.race([stop, new Promise((resolve) => setTimeout(resolve, intervalMs))]);
    } while (!once && !stopped);
    return EXIT.ok;
  } finally {
    await source.close();
  }
}

/** Reads and prints one frame; false when the store could not be read (said on stderr: live, top goes on). */
async function showFrame(reader: FleetReader, io: Io, clear: string, json: boolean): Promise<boolean> {
  let view: FleetView;
  try {
    view = await reader.read();
  } catch (error) {
    io.err(`top: reading the store failed: ${(error as Error).message}`);
    return false;
  }
  if (json) io.out(JSON.stringify(view, null, 2));
  else {
    const [first, ...rest] = renderFrame(view);
    io.out(`${clear}${first}`);
    for (const line of rest) io.out(line);
  }
  return true;
}

/** `sluice top --redis URL`: the fleet's hottest keys, rates, versions and shard balance, live. */
export const topCommand: Command = {
  name: 'top',
  summary: "a live view of the fleet's hottest keys, rates, rules versions and shard balance, from the store",
  help: HELP,
  run: (args, io) => runTop(args, io, untilSignal),
};
