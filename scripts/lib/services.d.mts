// Types for the parts of services.mjs that TypeScript code (tests) imports.
export interface StackService {
  name: string;
  what: string;
  profile?: string;
}
export declare const SERVICES: StackService[];
export declare const PROFILES: string[];
