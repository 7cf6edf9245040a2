// Three calls of one rule with a limit of 2 on PostgresStore, installed from its tarball; prints what each answered.
module.exports = async function run({ PostgresStore, migrate }, url, prefix) {
  await migrate({ connectionString: url, tablePrefix: prefix });
  const store = new PostgresStore({ connectionString: url, tablePrefix: prefix, timeoutMs: 5000 });
  const check = {
    rule: 'packed',
    tag: 'packedTagAAAAAAAAAAAAA',
    algorithm: 'fixed_window',
    params: { limit: 2, windowMs: 60000, burst: 2 },
    cost: 1,
    mode: 'enforce',
  };
  const allowed = [];
  for (let i = 0; i < 3; i++) allowed.push((await store.evaluate([check], Date.now()))[0].allowed);
  await store.close();
  console.log(JSON.stringify(allowed));
};
