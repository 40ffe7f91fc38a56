export { foldMessages, surfaceMessage, surfaceProjectionCount } from './derive.ts'
export { SessionError, SessionErrorCode, type SessionErrorWhere } from './errors.ts'
export { forkSeed } from './fork.ts'
export { canonicalHeader, foldRequestHeader, headersEqual } from './header.ts'
export { applyInboxSplice, emptyInbox, foldInbox } from './inbox-fold.ts'
export { SESSION_FORMAT_VERSION } from './jsonl-codec.ts'
export { type AppendIo, nodeAppendIo } from './jsonl-files.ts'
export { JsonlStorage, type JsonlStorageOptions } from './jsonl-storage.ts'
export { MemoryStorage } from './memory-storage.ts'
export {
  assistantMessageSchema,
  contentBlockSchema,
  messageSchema,
  requestHeaderSchema,
  streamChunkSchema,
  surfaceMetaSchema,
  toolResultMessageSchema,
  userMessageSchema,
} from './payload-schemas.ts'
export { SessionProjectionRegistry } from './projections.ts'
export { interruptedTurnClosers, RepairErrorCode } from './repair.ts'
export { composeRequest, type RequestExtras } from './request.ts'
export {
  defineSessionEvent,
  type SessionEventDefinition,
  sessionEventDefinition,
  validateEvent,
} from './schemas.ts'
export { snapshotJson } from './snapshot.ts'
export { appendInput, Sessions, Sessions as default, type SessionsConfig } from './store.ts'
export type * from './types.ts'
export { SessionWriter } from './writer.ts'
