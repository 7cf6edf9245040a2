// An ESM WebSocket server as a user writes it: `ws` on a plain Node server, one socket per address, one message each.
import { createServer } from 'node:http';
import { websocketLimit } from '@sluice/websocket';
import { WebSocketServer } from 'ws';
import options from './websocket-options.cjs';

const limits = websocketLimit(options);
const wss = new WebSocketServer({ noServer: true });
wss.on('connection', (ws) => {
  ws.on(
    'message',
    limits.onMessage(ws, (data) => ws.send(`echo:${data}`)),
  );
});
const server = createServer((_req, res) => res.end());
server.on('upgrade', limits.handleUpgrade(wss));
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
