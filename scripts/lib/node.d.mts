// Types for the parts of node.mjs that TypeScript code (tests) imports.
export declare function nodePin(): { kind: string; version: string; package: string; why: string };
export declare function enginesMinimum(): number[];
export declare function atLeast(version: string, min: number[]): boolean;
export declare function scriptCommand(name: string): [string, string[]];
