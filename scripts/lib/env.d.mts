// Types for the parts of env.mjs that TypeScript code (tests) imports.
export declare const ROOT: string;
export declare function loadEnv(opts?: { fresh?: boolean }): Record<string, string>;
export declare function ensureFlowClientSecret(log?: (msg: string) => void, root?: string): boolean;
export declare function intSetting(name: string): number;
export declare function postgresUrlSetting(name: string): URL;
