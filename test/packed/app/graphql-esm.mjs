// @sluice/graphql and its three server entries through import.
import * as core from '@sluice/core';
import * as graphql from '@sluice/graphql';
import * as apollo from '@sluice/graphql/apollo';
import * as mercurius from '@sluice/graphql/mercurius';
import * as yoga from '@sluice/graphql/yoga';
import run from './graphql-run.cjs';

await run({ core, graphql, apollo, yoga, mercurius });
