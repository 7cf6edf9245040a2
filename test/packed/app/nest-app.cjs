// A CommonJS Nest app on Express, as a user's compiled TypeScript runs: SluiceModule.forRoot with the shorthand
// (3 requests an hour per IP) and @RateLimit on one handler (1 an hour), applied as the compiler applies
// decorators.
require('reflect-metadata');
const { Controller, Get, Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { RateLimit, SluiceModule } = require('@sluice/nestjs');

class HelloController {
  hello() {
    return { hello: 'world' };
  }

  search() {
    return { results: [] };
  }
}

/** What `@Get(path) @RateLimit(...)` on a method compiles to. */
function decorate(method, ...decorators) {
  const proto = HelloController.prototype;
  const descriptor = Object.getOwnPropertyDescriptor(proto, method);
  Object.defineProperty(proto, method, Reflect.decorate(decorators, proto, method, descriptor) ?? descriptor);
}

Controller()(HelloController);
decorate('hello', Get());
decorate('search', Get('search'), RateLimit({ limit: 1, per: '1h' }));

class AppModule {}
Module({ imports: [SluiceModule.forRoot({ limit: 3, per: '1h' })], controllers: [HelloController] })(
  AppModule,
);

NestFactory.create(AppModule, { logger: false }).then(async (app) => {
  await app.listen(0, '127.0.0.1');
  console.log(`listening ${app.getHttpServer().address().port}`);
});
