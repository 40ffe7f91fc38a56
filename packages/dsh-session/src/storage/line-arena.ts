/**
 * Where a writer keeps encoded lines that wait for a slow backend: a few reused 1 MiB slabs outside
 * the JS heap. Queued bytes then cost the garbage collector nothing (no copying by scavenges, no
 * promotion of payloads that die in the old generation), and memory stays at the queue's size.
 */

/** The size of one slab; a run of lines larger than this gets a buffer of its own. */
export const SLAB_BYTES = 1024 * 1024

const NEWLINE = 0x0a

/** A slab and how many runs not yet durable point into it. */
export interface Slab {
  readonly buffer: Buffer
  runs: number
}

/** Encoded lines of `count` consecutive events, and the slab holding them (none for a buffer of their own). */
export interface EncodedRun {
  readonly data: Buffer
  readonly count: number
  readonly slab: Slab | undefined
}

/**
 * Slabs filled front to back. A slab is reused once every run in it is durable: the slab being
 * filled starts again at its beginning, a full one goes to a free list of at most `keep` slabs.
 */
export class LineArena {
  private current: Slab | undefined
  private offset = 0
  private free: Buffer[] = []

  /** `keep`: how many empty slabs to keep for reuse (enough for the writer's high-water mark). */
  constructor(private readonly keep: number) {}

  /**
   * Copies `text` (complete lines, or one line without its newline when `newline`) into the arena as
   * UTF-8; the run is valid until `done(run)`.
   */
  store(text: string, count: number, newline: boolean): EncodedRun {
    return this.storePieces([text], count, newline)
  }

  /** `store` for text given as pieces to be written one after another (no concatenated copy). */
  storePieces(pieces: readonly string[], count: number, newline: boolean): EncodedRun {
    const extra = newline ? 1 : 0
    let units = 0
    for (const piece of pieces) units += piece.length
    let slab = this.current
    if (slab === undefined || this.offset + units * 3 + extra > SLAB_BYTES) {
      // The cheap bound does not fit: measure exactly before taking another slab.
      let bytes = extra
      for (const piece of pieces) bytes += Buffer.byteLength(piece, 'utf8')
      if (bytes > SLAB_BYTES) {
        const text = pieces.join('')
        return { data: Buffer.from(newline ? `${text}\n` : text, 'utf8'), count, slab: undefined }
      }
      if (slab === undefined || this.offset + bytes > SLAB_BYTES) slab = this.nextSlab(slab)
    }
    const start = this.offset
    let end = start
    for (const piece of pieces) end += slab.buffer.write(piece, end, 'utf8')
    if (newline) slab.buffer[end++] = NEWLINE
    this.offset = end
    slab.runs++
    return { data: slab.buffer.subarray(start, end), count, slab }
  }

  /** `run` is durable (or dropped): its bytes may be overwritten. */
  done(run: EncodedRun): void {
    const slab = run.slab
    if (slab === undefined) return
    slab.runs--
    if (slab.runs > 0) return
    if (slab === this.current) this.offset = 0
    else this.recycle(slab)
  }

  /** Drops every slab not in use, so that an idle writer holds no memory here. */
  trim(): void {
    this.free = []
    if (this.current !== undefined && this.current.runs === 0) {
      this.current = undefined
      this.offset = 0
    }
  }

  private nextSlab(full: Slab | undefined): Slab {
    if (full !== undefined && full.runs === 0) this.recycle(full)
    const slab = { buffer: this.free.pop() ?? Buffer.allocUnsafeSlow(SLAB_BYTES), runs: 0 }
    this.current = slab
    this.offset = 0
    return slab
  }

  private recycle(slab: Slab): void {
    if (this.free.length < this.keep) this.free.push(slab.buffer)
  }
}
