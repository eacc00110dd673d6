// WACZ fixtures for tests that need real archive bytes but are not about the writer's options: one
// GET answered 200 (the exchange a one-page capture records), and a WACZ holding that one response.
// Pure: no database, bucket or clock, so unit tests under src/ use it as well as integration tests.
import type { HttpExchange, TlsSession } from '../../src/domain/wacz/warc.ts';
import { writeWacz, type WaczPage } from '../../src/domain/wacz/write.ts';

export interface OkExchangeOptions {
  date: Date;
  /** the response's Content-Type (default text/html) */
  contentType?: string;
  /** WARC-IP-Address: the address connected to */
  ip?: string;
  tls?: TlsSession;
}

/** GET `url` (origin-form target, Host from the URL) answered 200 OK with `body`. */
export function okExchange(url: string, body: Buffer, opts: OkExchangeOptions): HttpExchange {
  const { host, pathname } = new URL(url);
  return {
    url,
    date: opts.date,
    ...(opts.ip !== undefined ? { ip: opts.ip } : {}),
    ...(opts.tls !== undefined ? { tls: opts.tls } : {}),
    request: { method: 'GET', target: pathname, httpVersion: '1.1', headers: [['Host', host]] },
    response: {
      status: 200,
      statusText: 'OK',
      httpVersion: '1.1',
      headers: [
        ['Content-Type', opts.contentType ?? 'text/html'],
        ['Content-Length', String(body.length)],
      ],
      body,
    },
  };
}

export interface OneResponseWacz {
  /** the pages.jsonl lines; the one response recorded is the first page's URL */
  pages: [WaczPage, ...WaczPage[]];
  body: Buffer;
  software: string;
  created: Date;
  contentType?: string;
}

/** A WACZ whose WARC records one response: the first page's URL answered 200 with `body`. */
export async function oneResponseWacz(w: OneResponseWacz): Promise<Buffer> {
  const exchange = okExchange(w.pages[0].url, w.body, { date: w.created, ...(w.contentType !== undefined ? { contentType: w.contentType } : {}) });
  return writeWacz({ software: w.software, created: w.created, pages: w.pages, exchanges: [exchange] });
}
