import type { IncomingMessage } from 'node:http';
import type { RequestFacts } from '@sluice/core/http';

/**
 * What the limiter reads of an upgrade request (a plain Node `IncomingMessage`, as `server.on('upgrade')`
 * hands it): the socket's address, method, target and headers. No framework stands in front, so no proxy
 * header is trusted: behind a proxy, give `descriptors` an `ip` of your own.
 */
export class UpgradeFacts implements RequestFacts {
  readonly ip: string | undefined;
  readonly method: string;
  readonly url: string;
  readonly #req: IncomingMessage;

  /** `ip`: an address known otherwise (socket.io's handshake keeps it after a polling request's socket closed). */
  constructor(req: IncomingMessage, ip?: string) {
    this.#req = req;
    this.ip = ip ?? req.socket.remoteAddress;
    this.method = req.method ?? 'GET';
    this.url = req.url ?? '/';
  }

  header(name: string): string | readonly string[] | undefined {
    return this.#req.headers[name];
  }
}
