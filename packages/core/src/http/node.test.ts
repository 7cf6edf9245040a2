import { once } from 'node:events';
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { reportWhenDone } from './node.js';

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A loopback server whose handler reports each response's end; resolves with the reported statuses. */
async function serve(
  handle: (res: ServerResponse) => void,
): Promise<{ port: number; reports: (number | undefined)[] }> {
  const reports: (number | undefined)[] = [];
  server = createServer((_req, res) => {
    reportWhenDone(res, (status) => reports.push(status));
    handle(res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, reports };
}

/** Waits until `check` holds, a few ms at a time (the server side ends after the client reads). */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('reportWhenDone', () => {
  it('reports the final status once the response is sent', async () => {
    const { port, reports } = await serve((res) => {
      res.statusCode = 401;
      res.end('no');
    });
    const response = await fetch(`http://127.0.0.1:${port}/`);
    await response.text();
    await until(() => reports.length > 0);
    expect(reports).toEqual([401]);
  });

  it('reports undefined, once, when the client leaves before a response', async () => {
    let pending: ServerResponse | undefined;
    const { port, reports } = await serve((res) => {
      pending = res;
    });
    const client = request({ host: '127.0.0.1', port, path: '/' });
    client.on('error', () => {});
    client.end();
    await until(() => pending !== undefined);
    client.destroy();
    await until(() => reports.length > 0);
    // Writing after the client left changes nothing: the end was reported already.
    pending?.end('late');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(reports).toEqual([undefined]);
  });

  it('reports at once a response that has ended already', async () => {
    const reports: (number | undefined)[] = [];
    server = createServer((_req, res) => {
      res.statusCode = 204;
      res.end();
      res.once('finish', () => reportWhenDone(res, (status) => reports.push(status)));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    await until(() => reports.length > 0);
    expect(reports).toEqual([204]);
  });
});
