/**
 * Server-sent events, parsed from raw bytes. Bytes are decoded with one streaming `TextDecoder`, so a
 * multi-byte UTF-8 character split across network reads decodes whole.
 */

/** One dispatched event: its `event:` type (default `message`) and its `data:` lines joined by `\n`. */
export interface SseEvent {
  readonly event: string
  readonly data: string
}

const LF = 10
const CR = 13
const COLON = 58

/**
 * An incremental parser for the `text/event-stream` format. Lines may end in LF, CRLF or CR, also when
 * the CR and LF arrive in different reads; comment lines (`:keep-alive`) are skipped; `id:` and
 * `retry:` are ignored. Work is linear in the bytes pushed: only the new text of each read is scanned.
 */
export class SseParser {
  readonly #decoder = new TextDecoder('utf-8')
  /** Text of the current, not yet terminated line. */
  #line = ''
  /** The previous read ended in CR: an LF at the start of the next read belongs to it. */
  #skipLf = false
  #data = ''
  #event = ''

  /** Feeds one network read; appends every event it completes to `out`. */
  push(bytes: Uint8Array, out: SseEvent[]): void {
    this.#consume(this.#decoder.decode(bytes, { stream: true }), out)
  }

  /**
   * Ends the input: flushes the decoder and appends any event it completes. An event whose blank
   * terminating line never arrived is discarded, as the format prescribes.
   */
  end(out: SseEvent[]): void {
    this.#consume(this.#decoder.decode(), out)
    this.#line = ''
    this.#data = ''
    this.#event = ''
  }

  #consume(text: string, out: SseEvent[]): void {
    if (text.length === 0) return
    let from = 0
    if (this.#skipLf) {
      this.#skipLf = false
      if (text.charCodeAt(0) === LF) from = 1
    }
    let start = from
    for (let i = from; i < text.length; i++) {
      const code = text.charCodeAt(i)
      if (code !== LF && code !== CR) continue
      const line = start === 0 ? this.#line + text.slice(0, i) : text.slice(start, i)
      if (start === 0) this.#line = ''
      this.#takeLine(line, out)
      if (code === CR) {
        if (i + 1 === text.length) this.#skipLf = true
        else if (text.charCodeAt(i + 1) === LF) i++
      }
      start = i + 1
    }
    if (start === 0) this.#line += text
    else if (start < text.length) this.#line = text.slice(start)
  }

  #takeLine(line: string, out: SseEvent[]): void {
    if (line.length === 0) {
      if (this.#data.length > 0) out.push({ event: this.#event || 'message', data: this.#data.slice(0, -1) })
      this.#data = ''
      this.#event = ''
      return
    }
    if (line.charCodeAt(0) === COLON) return
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.charCodeAt(0) === 32) value = value.slice(1)
    if (field === 'data') this.#data += `${value}\n`
    else if (field === 'event') this.#event = value
  }
}
