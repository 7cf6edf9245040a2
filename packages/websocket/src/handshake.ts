import type { Duplex } from 'node:stream';
import type { DeniedResponse } from '@sluice/core/http';

const REASONS: Readonly<Record<number, string>> = {
  403: 'Forbidden',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

/**
 * Answers a refused upgrade on the raw socket: an HTTP response (429 with Retry-After and the RateLimit fields,
 * a JSON body naming the rule and the retry time) and the socket ended, so no WebSocket is ever opened.
 */
export function refuseHandshake(socket: Duplex, denied: DeniedResponse): void {
  if (socket.destroyed) return;
  const body = JSON.stringify(denied.body);
  const lines = [`HTTP/1.1 ${denied.status} ${REASONS[denied.status] ?? 'Refused'}`];
  for (const [name, value] of Object.entries(denied.headers)) lines.push(`${name}: ${String(value)}`);
  lines.push(
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  );
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

/** A refused upgrade as `ws`'s verifyClient callback takes it: status, a JSON body, Retry-After and RateLimit fields. */
export function rejectHandshake(denied: DeniedResponse): {
  status: number;
  body: string;
  headers: Record<string, string>;
} {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  for (const [name, value] of Object.entries(denied.headers)) headers[name] = String(value);
  return { status: denied.status, body: JSON.stringify(denied.body), headers };
}

/** Answers an upgrade the limiter could not decide (never thrown into the app): 503, socket ended. */
export function failHandshake(socket: Duplex): void {
  if (!socket.destroyed)
    socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
}
