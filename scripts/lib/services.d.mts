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
