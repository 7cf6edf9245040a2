import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dashboardPage } from './page.js';
import type { Reveal } from './reveal.js';
import type { FleetSource } from './source.js';
import { FleetReader, type FleetView } from './view.js';

/** Options of {@link startDashboard}. */
export interface DashboardOptions {
  readonly source: FleetSource;
  readonly reveal?: Reveal | undefined;
  /** Keys shown per rule. */
  readonly keys: number;
  /** How often the store is read (and the page polls), ms. */
  readonly intervalMs: number;
  readonly host: string;
  /** 0: any free port. */
  readonly port: number;
  /** Every request must carry it (`?token=` or `Authorization: Bearer`); a fresh random one when not given. */
  readonly token?: string | undefined;
  /** Told when a read of the store fails (the page keeps the last view and says so). */
  readonly onError?: (error: Error) => void;
}

/** A running dashboard. */
export interface Dashboard {
  /** The page's address, token included: what to open. */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  close(): Promise<void>;
}

/** One read of the fleet as the page's sparklines keep it: each rule's and each shown key's rate. */
interface Frame {
  readonly at: number;
  readonly keys: Record<string, Record<string, number>>;
}

/** Frames kept for the sparklines. */
const HISTORY = 60;

/** A frame of a view: per rule (`domain/rule`), each shown key's rate. */
function frameOf(view: FleetView): Frame {
  const keys: Record<string, Record<string, number>> = {};
  for (const rule of view.board.rules)
    keys[`${rule.domain}/${rule.rule}`] = Object.fromEntries(rule.keys.keys.map((k) => [k.tag, k.perSecond]));
  return { at: view.at, keys };
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether the request carries the token (compared in constant time). */
function carriesToken(req: IncomingMessage, url: URL, token: Buffer): boolean {
  const header = req.headers.authorization;
  const given = header?.startsWith('Bearer ') ? header.slice(7) : url.searchParams.get('token');
  return given !== null && given !== undefined && timingSafeEqual(digest(given), token);
}

/** Headers of every answer: nothing cached, nothing framed, nothing fetched but from itself. */
function securityHeaders(nonce: string): Record<string, string> {
  return {
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  };
}

/**
 * Serves the dashboard: the page and its JSON (`api/view`: the merged view and the recent frames), both only
 * to a request carrying the token. The store is read every interval, whatever the number of pages open.
 */
export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const token = options.token ?? randomBytes(18).toString('base64url');
  const expected = digest(token);
  const reader = new FleetReader(options.source, options.reveal, options.keys);
  let view = await reader.read();
  const history: Frame[] = [frameOf(view)];
  let timer: NodeJS.Timeout | undefined;
  const poll = () => {
    timer = setTimeout(async () => {
      try {
        view = await reader.read();
        history.push(frameOf(view));
        if (history.length > HISTORY) history.shift();
      } catch (error) {
        options.onError?.(error as Error);
      }
      if (timer !== undefined) poll();
    }, options.intervalMs);
  };
  poll();

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const nonce = randomBytes(16).toString('base64');
    const url = new URL(req.url ?? '/', 'http://dashboard');
    const send = (status: number, type: string, body: string, extra: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': type, ...securityHeaders(nonce), ...extra });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return send(405, 'text/plain', 'GET only\n', { allow: 'GET, HEAD' });
    if (!carriesToken(req, url, expected))
      return send(401, 'text/plain', 'a token is required (the address sluice dashboard printed)\n', {
        'www-authenticate': 'Bearer',
      });
    if (url.pathname === '/')
      return send(200, 'text/html; charset=utf-8', dashboardPage(nonce, options.intervalMs));
    if (url.pathname === '/api/view') return send(200, 'application/json', JSON.stringify({ view, history }));
    return send(404, 'text/plain', 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/?token=${token}`,
    port,
    token,
    async close() {
      clearTimeout(timer);
      timer = undefined;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
