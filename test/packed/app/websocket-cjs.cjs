// A CommonJS WebSocket server: `ws` with verifyClient (as under @fastify/websocket), one socket per address, one
// message each.
const { createServer } = require('node:http');
const { websocketLimit } = require('@sluice/websocket');
const { WebSocketServer } = require('ws');
const options = require('./websocket-options.cjs');

const limits = websocketLimit(options);
const server = createServer((_req, res) => res.end());
const wss = new WebSocketServer({ server, verifyClient: limits.verifyClient });
wss.on('connection', (ws, req) => {
  limits.attach(ws, req);
  ws.on(
    'message',
    limits.onMessage(ws, (data) => ws.send(`echo:${data}`)),
  );
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
