// The limits both WebSocket apps use: one socket per address, one message per connection.
module.exports = {
  rules: {
    domain: 'packed_ws',
    rules: [
      {
        name: 'sockets_per_ip',
        match: {},
        key: ['ip'],
        algorithm: 'concurrency',
        limit: { concurrent: 1, lease: '30s' },
      },
    ],
  },
  messages: {
    rules: [
      { name: 'messages_per_connection', match: {}, key: ['connection'], limit: { requests: 1, per: '1h' } },
    ],
  },
};
