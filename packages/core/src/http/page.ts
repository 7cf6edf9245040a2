import type { ServerResponse } from 'node:http';
import type { DeniedResponse } from '../fields/responses.js';

/*
 * Sending the challenge page (escalation/challengePage.ts writes it) on a Node response: what the Node and
 * fetch writers do with a denial that carries one.
 */

/** The page's Content-Type. */
export const PAGE_TYPE = 'text/html; charset=utf-8';

/** Sends a denial's page on a Node response (the Node layer's default for every framework over it). */
export function sendChallengePage(res: ServerResponse, denied: DeniedResponse): void {
  if (res.headersSent || denied.html === undefined) return;
  res.statusCode = denied.status;
  for (const name in denied.headers) res.setHeader(name, denied.headers[name] as string);
  res.setHeader('Content-Type', PAGE_TYPE);
  res.end(denied.html);
}
