// @sluice/opentelemetry through import.
import * as core from '@sluice/core';
import { openTelemetryObserver } from '@sluice/opentelemetry';
import run from './otel-run.cjs';

await run(openTelemetryObserver, core);
