// Preloaded (node --require) into the MIGRATING.md snippets, which listen on port 3000 as users write them: every
// server listens on a free loopback port instead, and the first one prints it, as the packed test's own apps do.
const http = require('node:http');

const listen = http.Server.prototype.listen;
let announced = false;
http.Server.prototype.listen = function listenOnFreePort(...args) {
  const callback = args.find((arg) => typeof arg === 'function');
  this.once('listening', () => {
    if (announced) return;
    announced = true;
    console.log(`listening ${this.address().port}`);
  });
  return listen.call(this, { port: 0, host: '127.0.0.1' }, callback);
};
