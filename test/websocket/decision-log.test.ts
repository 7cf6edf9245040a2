/**
 * Issue 26, part 3: refusals of WebSocket upgrades and messages reach the decision log (one JSON line each, keys
 * hashed), through the real `ws` client and server; the connections held show in @sluice/prometheus.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { prometheusObserver } from '@sluice/prometheus';
import { websocketLimit } from '@sluice/websocket';
import { describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';

const until = async (what: () => boolean): Promise<void> => {
  for (let i = 0; i < 100 && !what(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  if (!what()) throw new Error('timed out');
};

describe('WebSocket refusals in the decision log, connections in the metrics', () => {
  it('logs a refused upgrade and a refused message, and counts the held connection while it is open', async () => {
    const lines: Record<string, unknown>[] = [];
    const observer = prometheusObserver();
    const limits = websocketLimit({
      rules: {
        domain: 'ws_log',
        rules: [
          {
            name: 'one_socket',
            match: {},
            key: ['ip'],
            algorithm: 'concurrency',
            limit: { concurrent: 1, lease: '5s' },
          },
        ],
      },
      messages: {
        rules: [{ name: 'one_message', match: {}, key: ['connection'], limit: { requests: 1, per: '60s' } }],
      },
      decisionLog: true,
      // Denials are written with warn, as objects (pino-style); notices are strings.
      logger: {
        warn: (entry: unknown) =>
          typeof entry === 'object' ? lines.push(entry as Record<string, unknown>) : undefined,
        info: (entry) => lines.push(entry as Record<string, unknown>),
      },
      observer,
    });
    const wss = new WebSocketServer({ noServer: true });
    wss.on('connection', (ws) =>
      ws.on(
        'message',
        limits.onMessage(ws, () => ws.send('ok')),
      ),
    );
    const server = createServer();
    server.on('upgrade', limits.handleUpgrade(wss));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const frames: string[] = [];
      const ws = new WebSocket(url);
      ws.on('message', (data) => frames.push(data.toString()));
      await new Promise((resolve) => ws.once('open', resolve));
      const metrics = await observer.metrics();
      expect(metrics).toContain('sluice_connections_held{rule="one_socket"} 1');

      const refused = new WebSocket(url);
      const status = await new Promise<number>((resolve) =>
        refused.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)),
      );
      expect(status).toBe(429);
      ws.send('a');
      ws.send('b');
      await until(() => frames.length === 2);

      const denied = lines.filter((line) => line.outcome === 'denied');
      expect(denied.map((line) => line.rule)).toEqual(['one_socket', 'one_message']);
      // Keys are hashed: neither the address nor the connection id is in clear.
      expect(JSON.stringify(denied)).not.toContain('127.0.0.1');
      const gone = new Promise((resolve) => ws.once('close', resolve));
      ws.close();
      await gone;
      let after = '';
      for (let i = 0; i < 50 && !after.includes('sluice_connections_held{rule="one_socket"} 0'); i++) {
        after = await observer.metrics();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(after).toContain('sluice_connections_held{rule="one_socket"} 0');
    } finally {
      server.closeAllConnections();
      server.close();
      wss.close();
      await limits.close();
    }
  });
});
