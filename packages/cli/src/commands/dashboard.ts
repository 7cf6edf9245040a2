import { parseCommandArgs, stringOption } from '../args.js';
import { type Command, EXIT, type ExitCode, type Io, UsageError } from '../io.js';
import { startDashboard } from '../watch/server.js';
import { SOURCE_HELP } from '../watch/source.js';
import { untilSignal } from '../watch/timing.js';
import { SHOWN_KEYS } from '../watch/view.js';
import { openViewer, VIEWER_OPTIONS } from '../watch/viewer.js';

const HELP = `Usage: sluice dashboard --redis <url> [--cluster] [--prefix <prefix>] [--port 8090] [--host 127.0.0.1]
       [--token <token>] [--interval 2s] [--keys 10] [--reveal <module>]

Serves one self-contained page (no CDN: inline script, style and SVG), updated live: a heat map of denial rates
by rule and route, the hottest keys (hashed counter tags) with sparklines of their rates, each gateway's store
health, the rules versions the gateways run (mixed versions flagged) and, on a Redis Cluster, each master's
share of the calls. It reads the boards the gateways publish (watch: {publish: true}) once per interval, however
many pages are open. It listens on 127.0.0.1 by default, and every request must carry the token: the address
printed at start holds it. SIGINT or SIGTERM stops it.

Options:
${SOURCE_HELP}
  --port <n>            default 8090; 0 for any free port
  --host <address>      default 127.0.0.1 (another address serves the board to the network: the token then
                        travels in clear unless a TLS proxy is in front)
  --token <token>       the token requests must carry (at least 16 characters); default a random one
  --interval <d>        time between two reads of the store (500ms, 2s, 1m); default 2s
  --keys <n>            keys shown per rule; default ${SHOWN_KEYS}
  --reveal <module>     a module exporting reveal(tag, rule): your own lookup from a tag to a name, called
                        for the shown tags only (nothing in clear is stored)
  -h, --help            show this help

Exit codes: 0 stopped by a signal, 1 the store could not be read, 2 usage error, or ioredis or @sluice/redis
not installed.`;

function portOption(text: string | undefined): number {
  const port = Number(text ?? 8090);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError('--port must be 0 to 65535');
  return port;
}

/** `sluice dashboard`, serving until `stop` resolves (a signal; tests pass their own). */
export async function serveDashboard(
  args: readonly string[],
  io: Io,
  stop: () => Promise<void>,
): Promise<ExitCode> {
  const parsed = parseCommandArgs(args, {
    ...VIEWER_OPTIONS,
    port: { type: 'string' },
    host: { type: 'string' },
    token: { type: 'string' },
  });
  const token = stringOption(parsed, 'token');
  if (token !== undefined && token.length < 16)
    throw new UsageError('--token must be at least 16 characters');
  const port = portOption(stringOption(parsed, 'port'));
  const host = stringOption(parsed, 'host') ?? '127.0.0.1';
  const viewer = await openViewer(parsed, 'dashboard', io);
  if (typeof viewer === 'number') return viewer;
  const { source, reveal, keys, intervalMs } = viewer;
  try {
    const dashboard = await startDashboard({
      source,
      reveal,
      keys,
      intervalMs,
      host,
      port,
      token,
      onError: (error) => io.err(`dashboard: reading ${source.label} failed: ${error.message}`),
    });
    io.out(`sluice dashboard on ${dashboard.url}`);
    io.out('open that address (it holds the token: every request needs it); SIGINT or SIGTERM stops');
    await stop();
    await dashboard.close();
    return EXIT.ok;
  } catch (error) {
    io.err(`dashboard: ${(error as Error).message}`);
    return EXIT.findings;
  } finally {
    await source.close();
  }
}

/** `sluice dashboard --redis URL`: the live page of the fleet's limits, on loopback, behind a token. */
export const dashboardCommand: Command = {
  name: 'dashboard',
  summary:
    "serve a live page of the fleet's denial heat map, hottest keys, store health, versions and shards",
  help: HELP,
  run: (args, io) => serveDashboard(args, io, untilSignal),
};
