// 202: the request was taken and what it asked for follows (a crawl runs, a report is admitted,
// documents are indexed). Routes return its body, so the reply schema still checks it.
export function accepted<T>(reply: { code(statusCode: 202): unknown }, body: T): T {
  void reply.code(202);
  return body;
}
