/**
 * Side by side: the same requests to an app limited by another library and to its Sluice equivalent, over real
 * HTTP on loopback, and what MIGRATING.md says of the two answers.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One response as a client sees it: status, lower-cased headers, body text. */
export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** Sends `count` GETs to `url` one after another. */
export async function send(url: string, count: number, init?: RequestInit): Promise<Reply[]> {
  const replies: Reply[] = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(url, init);
    replies.push({
      status: response.status,
      headers: Object.fromEntries(response.headers),
      body: await response.text(),
    });
  }
  return replies;
}

/** The statuses of the replies. */
export const statuses = (replies: readonly Reply[]): number[] => replies.map((reply) => reply.status);

/** The named header of each reply (undefined where absent). */
export const headerOf = (replies: readonly Reply[], name: string): (string | undefined)[] =>
  replies.map((reply) => reply.headers[name]);

/** The first denied reply; fails the test when none was. */
export function firstDenial(replies: readonly Reply[]): Reply {
  const denied = replies.find((reply) => reply.status === 429);
  if (denied === undefined) throw new Error(`no 429 among ${statuses(replies).join(', ')}`);
  return denied;
}

/** Listens on a free loopback port; the URL and a close function. */
export async function listen(server: Server): Promise<{ url: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Waits `ms` of real time: the peers read the real clock. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Quiet logger for the Sluice side (its start-up notices are tested elsewhere). */
export const quiet = { warn: () => {}, info: () => {}, error: () => {} };
