export * from './cdx.ts';
export * from './dedup.ts';
export * from './read.ts';
export * from './warc.ts';
export * from './write.ts';
