// A stand-in for the ledger's report route, for tests of the capture flow: records every POST,
// answers from a script (202 when the script is empty).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { DispatchBody, LevelReportBody } from '../../src/domain/contract.ts';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: LevelReportBody;
  at: number;
}

export async function startReceiver(): Promise<{ url: string; received: Received[]; answers: number[]; close(): Promise<void>; server: Server }> {
  const received: Received[] = [];
  const answers: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as LevelReportBody, at: Date.now() });
      const code = answers.shift() ?? 202;
      res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(code < 300 ? { accepted: true } : { error: `scripted ${code}` }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, received, answers, server, close: () => new Promise((r) => server.close(() => r())) };
}

/** A level dispatch whose report goes to the receiver at `receiverUrl` (a new crawl id, depth 0, wacz, 200 ms spacing unless given). */
export function dispatchTo(receiverUrl: string, over: Partial<DispatchBody> & Pick<DispatchBody, 'pages'>): DispatchBody {
  const crawlId = over.crawlId ?? randomUUID();
  const depth = over.depth ?? 0;
  return {
    crawlId,
    depth,
    orgId: 'acme',
    reportUrl: `${receiverUrl}/api/crawls/${crawlId}/levels/${depth}`,
    formats: ['wacz'],
    signing: false,
    perHostDelayMs: 200,
    hostParallelism: 4,
    notBefore: {},
    ...over,
  };
}
