// Allowlist entries never open the stack (issue 29, Deliver 4), over the real stack and the real
// capture flow. Three names are allowlisted as host:port: stack.test resolves to 127.0.0.1 (where
// the stack listens; here a listener recording every connection), meta.test to 169.254.169.254
// (cloud metadata), ok.test to an ordinary listener on 127.0.0.47. Before, the first two were
// fetched like the third: a name's entry skipped every address class.
import { lookup } from 'node:dns/promises';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/domain/contract.ts';
import { waitForCrawlEnd } from '../support/crawls.ts';
import { TEST_SITES_ALLOW } from '../support/config.ts';
import { startListener, type Listener } from '../support/hostile-site.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';

const ORG = 'allow';
/** on 127.0.0.1, the stack's own address: what stack.test resolves to */
let stack: Listener;
/** on 127.0.0.47: what ok.test resolves to, so the listener's silence above means something */
let ordinary: Listener;

const live = useLiveCrawlStack(async () => {
  [stack, ordinary] = await Promise.all([startListener(), startListener('127.0.0.47')]);
  return {
    org: ORG,
    hosts: { filler: { pages: { '/': '<title>filler</title>' } } },
    env: { CAPTURE_LEDGER_CAPTURE_ALLOW: `${TEST_SITES_ALLOW},stack.test:${stack.port},meta.test:${stack.port},ok.test:${ordinary.port}` },
    flow: {
      resolve: async (name) => {
        if (name === 'stack.test') return ['127.0.0.1'];
        if (name === 'meta.test') return ['169.254.169.254'];
        if (name === 'ok.test') return ['127.0.0.47'];
        return (await lookup(name, { all: true })).map((a) => a.address);
      },
    },
  };
});

afterAll(async () => {
  await Promise.all([stack?.close(), ordinary?.close()]);
});

async function manifestOf(crawlId: string, url: string): Promise<Manifest> {
  const sub = await live.tdb.db
    .selectFrom('capture_submissions')
    .select('manifest_key')
    .where('crawl_id', '=', crawlId)
    .where('url', '=', url)
    .executeTakeFirstOrThrow();
  const res = await live.s3.send(new GetObjectCommand({ Bucket: live.bucket, Key: sub.manifest_key! }));
  return JSON.parse(await res.Body!.transformToString()) as Manifest;
}

describe('an allowlisted host:port', () => {
  it('resolving to the stack’s address or to cloud metadata is refused before any connection; an ordinary one is fetched', async () => {
    const seeds = [`http://stack.test:${stack.port}/`, `http://meta.test:${stack.port}/latest/meta-data/`, `http://ok.test:${ordinary.port}/`];
    const res = await fetch(`${live.api.url}/api/crawls`, {
      method: 'POST',
      headers: await live.as('alice', [ORG]),
      body: JSON.stringify({ seeds, maxDepth: 0 }),
    });
    expect(res.status, await res.clone().text()).toBe(202);
    const { crawlId } = (await res.json()) as { crawlId: string };
    expect(await waitForCrawlEnd(live.tdb.db, crawlId, 120_000)).toMatchObject({ state: 'succeeded' });

    expect(stack.connections).toEqual([]);
    expect(ordinary.connections.length).toBeGreaterThan(0);
    const pages = await live.tdb.db.selectFrom('crawl_pages').select(['url', 'state']).where('crawl_id', '=', crawlId).orderBy('url').execute();
    expect(pages).toEqual([
      { url: seeds[1], state: 'failed' },
      { url: seeds[2], state: 'captured' },
      { url: seeds[0], state: 'failed' },
    ]);
    const toStack = await manifestOf(crawlId, seeds[0]!);
    expect(toStack.error?.type).toBe('ERROR_TYPE_ADDRESS_REFUSED');
    expect(toStack.error?.message).toContain(`stack.test → 127.0.0.1 port ${stack.port}: the stack's own address, which no allowlist entry opens`);
    const toMetadata = await manifestOf(crawlId, seeds[1]!);
    expect(toMetadata.error?.type).toBe('ERROR_TYPE_ADDRESS_REFUSED');
    expect(toMetadata.error?.message).toContain(
      `meta.test → 169.254.169.254 port ${stack.port}: a metadata address, which an entry for meta.test does not open`,
    );
  }, 180_000);
});
