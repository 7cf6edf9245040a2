// A CommonJS Koa app as a user writes it: a rules object, 3 requests an hour per IP.
const Koa = require('koa');
const { rateLimit } = require('@sluice/koa');

const app = new Koa();
app.use(
  rateLimit({
    rules: {
      domain: 'koa_app',
      rules: [{ name: 'koa_per_ip', key: ['ip'], limit: { requests: 3, per: '1h' } }],
    },
  }),
);
app.use((ctx) => {
  ctx.body = { hello: 'world' };
});
const server = app.listen(0, '127.0.0.1', () => {
  console.log(`listening ${server.address().port}`);
});
