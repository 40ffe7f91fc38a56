export type * from './types.ts'
export { SESSION_FORMAT_VERSION } from './jsonl-codec.ts'
export { type AppendIo, nodeAppendIo } from './jsonl-files.ts'
export { JsonlStorage, type JsonlStorageOptions } from './jsonl-storage.ts'
