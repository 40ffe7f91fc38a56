/** What a backend hands the storage contract suite: instances over one backing, and optional powers. */
import type { SessionId } from 'dsh-llm'
import type { SessionStorage } from '../storage/types.ts'

/** Options the suite passes when it opens an instance. */
export interface ContractOpenOptions {
  /** The per-event size limit the instance must enforce (serialized bytes). */
  readonly maxEventBytes?: number
}

/**
 * One backing store (a directory, a database schema) for one test. Every `open()` returns a new
 * instance over it; two instances must behave like two processes sharing the backing.
 */
export interface StorageContractBacking {
  /** A new storage instance over this backing. The suite closes every instance it opens. */
  open(options?: ContractOpenOptions): SessionStorage | Promise<SessionStorage>
  /** Frees the backing after the test (remove the directory, drop the schema). */
  cleanup?(): void | Promise<void>
}

/** Makes a fresh, empty backing for one test. */
export type StorageContractFactory<B extends StorageContractBacking = StorageContractBacking> = () =>
  | B
  | Promise<B>

/**
 * What only some backends can simulate. The suite defines the matching cases only for the powers a
 * backend passes; each receives the test's backing.
 */
export interface StorageContractPowers<B extends StorageContractBacking = StorageContractBacking> {
  /**
   * Leaves a torn, never-acknowledged partial write of one more event at the end of `sessionId`, as a
   * crash in the middle of a write would. The next `load` must return every complete event, report
   * `truncatedTail`, and later appends must continue at the next seq.
   */
  tearTail?(backing: B, sessionId: SessionId): void | Promise<void>
  /**
   * Makes `holder`'s lease on `sessionId` look like its process died (or its pid was reused), without
   * `holder` releasing it. Another instance's `acquire` must then take the lease over, and `holder`'s
   * later appends must fail with `LEASE_LOST` without writing.
   */
  abandonLease?(backing: B, holder: SessionStorage, sessionId: SessionId): void | Promise<void>
  /**
   * Puts one entry in the backing that is not a readable session (corrupt, foreign or unreadable) and
   * returns the `path` that `list()` must report it under.
   */
  plantBadEntry?(backing: B): string | Promise<string>
  /**
   * For a backend that talks to its backing over a connection: opens an instance whose traffic passes
   * through a fault injector the suite drives (a TCP proxy, say). The suite closes the instance.
   */
  openFaulty?(backing: B): Promise<ContractFaults>
}

/** An instance behind a fault injector, and the faults the suite may inject into its traffic. */
export interface ContractFaults {
  readonly storage: SessionStorage
  /** The next append's request is lost before it reaches the backing, and its connection cut. */
  cutBeforeSend(): void
  /** The next append reaches the backing and is carried out; its connection is cut before the reply. */
  cutAfterCommit(): void
  /**
   * Holds every request and reply in flight on the instance's open connections until the returned
   * function is called; held requests then still reach the backing.
   */
  hold(): () => void
}
