// Types for the parts of services.mjs that TypeScript code (tests) imports.
export interface StackService {
  name: string;
  what: string;
  profile?: string;
}
export declare const SERVICES: StackService[];
export declare const PROFILES: string[];
export declare const OPENFGA_CACHE_FLAGS: string[];
export declare const SEARCH_ATTRIBUTES: string[];
/** `--dynamic-config-value` pairs every Temporal dev server of the project starts with */
export declare const TEMPORAL_DYNAMIC_CONFIG: string[];
/** What every Temporal dev server of the project starts with: TEMPORAL_DYNAMIC_CONFIG and SEARCH_ATTRIBUTES as flags. */
export declare function temporalDevServerFlags(): string[];
/** `openfga run` on a Postgres datastore, HTTP and gRPC on 127.0.0.1, no metrics or playground, text logs. */
export declare function openfgaRunArgs(httpPort: number, grpcPort: number): string[];
/** The environment an `openfga` command reads its datastore URL from (never its command line). */
export declare function datastoreEnv(datastoreUri: string): NodeJS.ProcessEnv;
