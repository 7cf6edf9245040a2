import { type GatewayBoard, parseBoard } from '@sluice/core';
import { isKeyPrefix, KEY_PREFIX_RULE } from '@sluice/core/store';
import { type ParsedArgs, stringOption } from '../args.js';
import { type Io, UsageError } from '../io.js';
import { connectRedis, loadRedisModules, redactUrl } from '../redis.js';

/** One Redis node's script calls (EVALSHA, EVAL): a limiter's calls, as INFO commandstats counts them. */
export interface NodeCalls {
  readonly node: string;
  readonly calls: number;
}

/** What the viewers read the fleet from: the boards, and on a Cluster each master's calls. */
export interface FleetSource {
  /** Where, for people: the URL without its password. */
  readonly label: string;
  readonly cluster: boolean;
  /** The live boards, and how many could not be read (another format, not a board). */
  boards(now: number): Promise<{ readonly boards: GatewayBoard[]; readonly unreadable: number }>;
  /** Each master's script calls since it started; undefined on a single Redis. */
  nodeCalls(): Promise<NodeCalls[] | undefined>;
  close(): Promise<void>;
}

/** The options both viewers take to reach the store. */
export const SOURCE_OPTIONS = {
  redis: { type: 'string' },
  cluster: { type: 'boolean' },
  prefix: { type: 'string' },
} as const;

export const SOURCE_HELP = `  --redis <url>         the Redis the gateways share (required): redis://[user:password@]host:port[/db]
  --cluster             the --redis URL is a node of a Redis Cluster: also each master's share of the calls
  --prefix <prefix>     the RedisStore's key prefix; default sluice`;

/** Script calls in an INFO commandstats text: EVALSHA, EVAL and their read-only forms. */
export function scriptCallsOf(info: string): number {
  let calls = 0;
  for (const match of info.matchAll(/^cmdstat_(?:evalsha|eval|evalsha_ro|eval_ro):calls=(\d+)/gm))
    calls += Number(match[1]);
  return calls;
}

/** The store of `--redis` (and `--cluster`, `--prefix`), connected; undefined when ioredis is missing (said). */
export async function openSource(
  parsed: ParsedArgs,
  command: string,
  io: Io,
): Promise<FleetSource | undefined> {
  const url = stringOption(parsed, 'redis');
  if (url === undefined) throw new UsageError(`${command} needs --redis <url>`);
  const prefix = stringOption(parsed, 'prefix') ?? 'sluice';
  if (!isKeyPrefix(prefix)) throw new UsageError(`--prefix ${KEY_PREFIX_RULE}`);
  const modules = await loadRedisModules(command, io);
  if (modules === undefined) return undefined;
  const cluster = parsed.values.cluster === true;
  const client = connectRedis(modules, url, cluster);
  await client.connect();
  const store = new modules.redis.RedisStore({ client, prefix, timeoutMs: 5000, breaker: false });
  return {
    label: redactUrl(url),
    cluster,
    async boards(now) {
      const texts = await store.board.read(now);
      const boards = texts.map(parseBoard).filter((board) => board !== undefined);
      return { boards, unreadable: texts.length - boards.length };
    },
    async nodeCalls() {
      if (!('nodes' in client)) return undefined;
      const masters = client.nodes('master');
      const infos = await Promise.all(masters.map((node) => node.info('commandstats')));
      return masters
        .map((node, i) => ({
          node: `${node.options.host}:${node.options.port}`,
          calls: scriptCallsOf(infos[i]!),
        }))
        .sort((a, b) => a.node.localeCompare(b.node));
    },
    async close() {
      await store.close();
      client.disconnect();
    },
  };
}
