// The harness's type follows its options (test/support/harness.ts): a part not asked for is not
// there. These are compile-time claims: `npm run typecheck` fails when one stops holding.
import { describe, expectTypeOf, it } from 'vitest';
import type { Harness } from '../support/harness.ts';
import type { LiveCrawlStack } from '../support/live-crawl.ts';

describe('Harness<O>', () => {
  it('has the API unless api: false, and nothing else by default', () => {
    expectTypeOf<Harness>().toHaveProperty('api');
    expectTypeOf<Harness>().toHaveProperty('restartApi');
    expectTypeOf<Harness<{ api: false }>>().not.toHaveProperty('api');
    expectTypeOf<Harness<{ api: false }>>().not.toHaveProperty('restartApi');
    for (const part of ['issuer', 'temporal', 'tw', 'hook', 'flow', 'site', 'replay', 'gateways', 'workerS3', 'workerFga'] as const)
      expectTypeOf<Harness>().not.toHaveProperty(part);
  });

  it('has Temporal and a worker with worker or crawls, a client alone with temporal', () => {
    expectTypeOf<Harness<{ worker: true }>>().toHaveProperty('tw');
    expectTypeOf<Harness<{ crawls: 'stub' }>>().toHaveProperty('tw');
    expectTypeOf<Harness<{ crawls: 'stub' }>>().toHaveProperty('temporal');
    expectTypeOf<Harness<{ temporal: true }>>().toHaveProperty('temporal');
    expectTypeOf<Harness<{ temporal: true }>>().not.toHaveProperty('tw');
    expectTypeOf<Harness<{ worker: false }>>().not.toHaveProperty('tw');
  });

  it('has the stub or the flow as crawls says', () => {
    expectTypeOf<Harness<{ crawls: 'stub' }>>().toHaveProperty('hook');
    expectTypeOf<Harness<{ crawls: 'stub' }>>().not.toHaveProperty('flow');
    expectTypeOf<Harness<{ crawls: 'flow' }>>().toHaveProperty('flow');
    expectTypeOf<Harness<{ crawls: 'flow' }>>().toHaveProperty('restartFlow');
    expectTypeOf<Harness<{ crawls: 'flow' }>>().not.toHaveProperty('hook');
  });

  it('has each gateway asked for, with the worker client behind it', () => {
    type S3Only = Harness<{ gateways: { s3: true } }>;
    expectTypeOf<S3Only>().toHaveProperty('workerS3');
    expectTypeOf<S3Only>().not.toHaveProperty('workerFga');
    expectTypeOf<S3Only['gateways']>().toHaveProperty('s3');
    expectTypeOf<S3Only['gateways']>().not.toHaveProperty('fga');
    expectTypeOf<Harness<{ gateways: { s3: true; fga: true } }>['gateways']>().toHaveProperty('fga');
  });

  it('the live crawl preset has the issuer, the flow, the site and a worker', () => {
    for (const part of ['issuer', 'flow', 'site', 'tw', 'temporal', 'api'] as const) expectTypeOf<LiveCrawlStack>().toHaveProperty(part);
    expectTypeOf<LiveCrawlStack>().not.toHaveProperty('hook');
  });
});
