// Types for the parts of env.mjs that TypeScript code (tests) imports.
export declare const ROOT: string;
export declare function loadEnv(opts?: { fresh?: boolean }): Record<string, string>;
export declare const LOCAL_SECRETS: [name: string, what: string][];
export declare const DATABASE_URLS: string[];
export declare function ensureLocalSecrets(log?: (msg: string) => void, root?: string): string[];
export declare function intSetting(name: string): number;
export declare function postgresUrlSetting(name: string): URL;
