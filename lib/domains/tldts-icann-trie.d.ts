// The package ships this module's types under dist/types, where an import of the ES module's own path does not look;
// these are the four exports lib/domains/hostname.ts reads, as that file declares them.
declare module 'tldts-icann/dist/es6/src/data/trie.js' {
  export const edgeStart: Uint16Array;
  export const edgeLength: Uint8Array;
  export const labelText: string;
  export const rulesRoot: number;
}
