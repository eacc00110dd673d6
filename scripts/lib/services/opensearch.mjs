// OpenSearch (profile `search`): one node under .stack/opensearch, started by the launcher
// `npm run tools -- --profile search` builds.
import { mkdirSync } from 'node:fs';
import { STACK_DIR, intSetting } from '../env.mjs';
import { opensearchCommand } from '../tools.mjs';
import { httpOk } from './http.mjs';

/** The java command line: a small heap, the launcher, then the node's settings. */
function launcherArgs(cmd, home, http, transport) {
  return [
    '-Xms512m',
    '-Xmx512m',
    '-XX:+UseG1GC',
    '-Djava.awt.headless=true',
    '-Dfile.encoding=UTF-8',
    '-Dio.netty.noUnsafe=true',
    '-Dio.netty.noKeySetOptimization=true',
    '-Dio.netty.recycler.maxCapacityPerThread=0',
    '-Dlog4j.shutdownHookEnabled=false',
    '-Dlog4j2.disable.jmx=true',
    ...cmd.args,
    cmd.main,
    `path.home=${home}`,
    `path.data=${home}/data`,
    `path.logs=${home}/logs`,
    'cluster.name=capture-ledger',
    'node.name=capture-ledger-1',
    'discovery.type=single-node',
    'network.host=127.0.0.1',
    `http.port=${http}`,
    `transport.port=${transport}`,
    'cluster.routing.allocation.disk.threshold_enabled=false',
    'action.auto_create_index=true',
  ];
}

export function opensearchSpec() {
  const http = intSetting('CAPTURE_LEDGER_OPENSEARCH_PORT');
  const transport = http + 100;
  const cmd = opensearchCommand();
  const home = STACK_DIR + 'opensearch';
  return {
    name: 'opensearch',
    ports: [
      { setting: 'CAPTURE_LEDGER_OPENSEARCH_PORT', port: http },
      { setting: 'CAPTURE_LEDGER_OPENSEARCH_PORT + 100 (transport)', port: transport },
    ],
    timeoutMs: 180000,
    tool: cmd,
    missing: 'the OpenSearch launcher (npm run tools -- --profile search builds it into .tools/opensearch)',
    match: 'OpenSearchLauncher',
    prepare() {
      for (const d of ['data', 'logs', 'config']) mkdirSync(`${home}/${d}`, { recursive: true });
    },
    command() {
      return [cmd.path, launcherArgs(cmd, home, http, transport)];
    },
    health: () =>
      httpOk(`http://127.0.0.1:${http}/_cluster/health`, (b) => {
        const s = JSON.parse(b).status;
        return s === 'green' || s === 'yellow';
      }),
    async afterHealthy() {
      // one node: indices get no replicas (so they are green) unless their own settings say so
      const res = await fetch(`http://127.0.0.1:${http}/_template/capture-ledger-single-node`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ index_patterns: ['*'], order: -1, settings: { number_of_replicas: 0 } }),
        signal: AbortSignal.timeout(10000),
      });
      if (res.status !== 200) throw new Error(`opensearch: could not put the single-node index template (HTTP ${res.status} ${await res.text()})`);
    },
    url: `http://127.0.0.1:${http}`,
  };
}
