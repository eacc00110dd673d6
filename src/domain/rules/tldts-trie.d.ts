// tldts ships these declarations at dist/types/src/data/trie.d.ts, not beside the CJS build.
declare module 'tldts/dist/cjs/src/data/trie.js' {
  export const nodeFlags: Uint8Array;
  export const edgeStart: Uint16Array;
  export const edgeLength: Uint8Array;
  export const edgeChild: Uint16Array;
  export const labelText: string;
  export const rulesRoot: number;
  export const exceptionsRoot: number;
}
