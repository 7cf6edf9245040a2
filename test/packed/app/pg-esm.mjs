// @sluice/postgres through import.
import * as postgres from '@sluice/postgres';
import run from './pg-run.cjs';

await run(postgres, process.env.SLUICE_PG_URL, 'esm_');
