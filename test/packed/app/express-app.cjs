// A CommonJS Express app as a user writes it: require, and the defaults (60 requests a minute per IP).
const express = require('express');
const { rateLimit } = require('@sluice/express');

const app = express();
app.use(rateLimit());
app.get('/', (_req, res) => {
  res.json({ hello: 'world' });
});
const server = app.listen(0, '127.0.0.1', () => {
  console.log(`listening ${server.address().port}`);
});
