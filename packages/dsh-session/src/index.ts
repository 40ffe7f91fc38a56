export { compactionClosers, compactionMessagePrefix } from './compaction-repair.ts'
export { foldMessages, replaceProblem, surfaceMessage, surfaceProjectionCount } from './derive.ts'
export { SessionError, SessionErrorCode, type SessionErrorWhere } from './errors.ts'
export { isUserMessage } from './fast-blocks.ts'
export { forkSeed } from './fork.ts'
export { canonicalHeader, foldRequestHeader, headersEqual } from './header.ts'
export { applyInboxSplice, emptyInbox, foldInbox } from './inbox-fold.ts'
export {
  assistantMessageSchema,
  compactionEndSchema,
  compactionStartSchema,
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
export {
  packageClosers,
  type RepairCloser,
  type RepairEvent,
  registerRepairCloser,
  repairClosers,
} from './repair-closers.ts'
export {
  composeRequest,
  type RequestExtras,
  type RequestMessageParts,
  requestMessageParts,
} from './request.ts'
export {
  coreEventCatalog,
  defineSessionEvent,
  type SessionEventDeclaration,
  type SessionEventDefinition,
  sessionEventDefinition,
  sessionEventTypes,
  validateEvent,
} from './schemas.ts'
export { snapshotJson } from './snapshot.ts'
export { checkBatch, storedPrefix } from './storage/batch-check.ts'
export { bothFailures, errorChain } from './storage/failures.ts'
export { decodeHeader as decodeSessionFileHeader, SESSION_FORMAT_VERSION } from './storage/jsonl/codec.ts'
export { type AppendIo, nodeAppendIo, nodeAppendIoWith } from './storage/jsonl/files.ts'
export { DEFAULT_DIR_MODE, DEFAULT_FILE_MODE } from './storage/jsonl/modes.ts'
export { expandRunLine, isRunLine } from './storage/jsonl/run-line.ts'
export {
  type ScanState as SessionFileState,
  SessionFileDecoder,
  type SessionFileDecoderOptions,
  type TornLine,
} from './storage/jsonl/scan.ts'
export { JsonlStorage, type JsonlStorageOptions } from './storage/jsonl/storage.ts'
export {
  type AdaptiveSyncOptions,
  DEFAULT_INLINE_SYNC_BUDGET_MS,
  DEFAULT_SYNC_BACKOFF_MS,
  FIRST_PROBATION,
  type JsonlSyncMode,
  type SyncCalls,
  SyncPolicy,
} from './storage/jsonl/sync-policy.ts'
export { MemoryStorage } from './storage/memory.ts'
export type * from './storage/types.ts'
export {
  DEFAULT_COMMIT_DELAY_MS,
  DEFAULT_HIGH_WATER_MARK,
  SessionWriter,
  type SessionWriterOptions,
} from './storage/writer.ts'
export { appendInput, Sessions, Sessions as default, type SessionsConfig } from './store.ts'
export { nextSlice, SLICE_MS, sliceReading, sliceSpent } from './time-slice.ts'
export type * from './types.ts'
export { validateUserMessage } from './user-message.ts'
export { isValidatedUserMessage } from './validated-messages.ts'
