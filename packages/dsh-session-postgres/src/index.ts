export { APPEND_SQL, appendFenced } from './append.ts'
export { claimableSessions } from './claim.ts'
export type { Delivery } from './deliveries.ts'
export { isLeaseLost, PgSessionError, PgSessionErrorCode, type PgSessionErrorWhere } from './errors.ts'
export { fenceSessions } from './guard.ts'
export {
  type Acceptance,
  type DeliveryState,
  MAILBOX_CHANNEL,
  Mailbox,
  type MailboxSendOptions,
  type PendingMessage,
} from './mailbox.ts'
export { MailboxListener } from './mailbox-listener.ts'
export { checkSchema, MIGRATIONS, migrate, SCHEMA_VERSION } from './migrations.ts'
export type { HeaderPage } from './read.ts'
export { PostgresStorage } from './storage.ts'
export {
  type AppendListener,
  type AppendOutcome,
  DEFAULT_CONNECTION_TIMEOUT_MS,
  DEFAULT_MAX_EVENT_BYTES,
  DEFAULT_STATEMENT_TIMEOUT_MS,
  type DeliveredListener,
  type LeaseLostListener,
  type PostgresStorageOptions,
} from './storage-options.ts'
