// `npm run issuer`: the dev OIDC issuer on 127.0.0.1:CAPTURE_LEDGER_ISSUER_PORT. Its key is kept in
// .stack/issuer/ so tokens survive a restart. The issuer URL and audience are the ones the API is
// configured to accept (CAPTURE_LEDGER_OIDC_ISSUER / _AUDIENCE) when set.
import { fileURLToPath } from 'node:url';
import closeWithGrace from 'close-with-grace';
import { loadConfigOrExit } from '../config/env.ts';
import { startIssuer } from './issuer.ts';
import { loadOrCreateIssuerKey } from './keys.ts';

const config = loadConfigOrExit('capture-ledger issuer');

const port = config.issuerPort;
const issuerUrl = config.identity.mode === 'oidc' ? config.identity.issuer.replace(/\/+$/, '') : `http://127.0.0.1:${port}`;
const audience = config.identity.mode === 'oidc' ? config.identity.audience : 'capture-ledger';
if (config.identity.mode === 'oidc' && config.identity.issuer !== issuerUrl) {
  console.error(`capture-ledger issuer: CAPTURE_LEDGER_OIDC_ISSUER=${config.identity.issuer} ends with "/": iss must equal it exactly, drop the slash`);
  process.exit(1);
}
const key = await loadOrCreateIssuerKey(fileURLToPath(new URL('../../.stack/issuer/', import.meta.url)));
// the capture flow's token needs the secret the flow holds (CAPTURE_LEDGER_FLOW_CLIENT_SECRET)
const flowClientSecret = config.identity.mode === 'oidc' ? config.identity.flowClientSecret : undefined;
if (flowClientSecret === undefined)
  console.warn(
    'capture-ledger issuer: CAPTURE_LEDGER_FLOW_CLIENT_SECRET is not set: the capture flow can get no token (npm start generates one into .env.local)',
  );
const issuer = await startIssuer({ port, host: '127.0.0.1', issuerUrl, audience, key, ...(flowClientSecret === undefined ? {} : { flowClientSecret }) });
console.log(
  `capture-ledger dev issuer on http://127.0.0.1:${port} (iss ${issuer.url}, aud ${audience}) — mints a token for anyone: loopback only; node ${process.version}`,
);
console.log(`  curl -s -X POST http://127.0.0.1:${port}/token -H 'content-type: application/json' -d '{"subject":"alice","organizations":["acme"]}'`);

closeWithGrace({ delay: 5000 }, async () => {
  await issuer.close();
});
