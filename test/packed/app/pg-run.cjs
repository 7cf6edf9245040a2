// Three calls of one rule with a limit of 2 on PostgresStore, installed from its tarball; prints what each answered
// ('failed open' for an answer that did not count). An hour's window: three calls straddle its end far more rarely
// than a minute's (a loaded CI run once saw the third allowed).
module.exports = async function run({ PostgresStore, migrate }, url, prefix) {
  await migrate({ connectionString: url, tablePrefix: prefix });
  const store = new PostgresStore({ connectionString: url, tablePrefix: prefix, timeoutMs: 5000 });
  const check = {
    rule: 'packed',
    tag: 'packedTagAAAAAAAAAAAAA',
    algorithm: 'fixed_window',
    params: { limit: 2, windowMs: 3600000, burst: 2 },
    cost: 1,
    mode: 'enforce',
  };
  const allowed = [];
  for (let i = 0; i < 3; i++) {
    const [result] = await store.evaluate([check], Date.now());
    allowed.push(result.degraded === undefined ? result.allowed : 'failed open');
  }
  await store.close();
  console.log(JSON.stringify(allowed));
};
