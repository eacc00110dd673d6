// The smallest environment loadConfig accepts: the required variables and nothing else, for the
// config's unit tests to change one thing at a time.
export const MINIMAL_ENV: Readonly<Record<string, string>> = {
  CAPTURE_LEDGER_DATABASE_URL: 'postgres://u:p@127.0.0.1:55432/capture_ledger',
  CAPTURE_LEDGER_FGA_API_URL: 'http://127.0.0.1:8080',
  CAPTURE_LEDGER_FGA_STORE_ID: '01HSTORE',
  CAPTURE_LEDGER_FGA_MODEL_ID: '01HMODEL',
  CAPTURE_LEDGER_S3_ENDPOINT: 'http://127.0.0.1:8333',
  CAPTURE_LEDGER_S3_ACCESS_KEY_ID: 'key',
  CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY: 'secret',
  CAPTURE_LEDGER_S3_BUCKET: 'captures',
};
