/**
 * A small arithmetic evaluator for the `calculate` tool: numbers, `+ - * / %`, parentheses and unary
 * minus. No `eval`: the model's input is parsed, never executed.
 */

/** Evaluates `expression`. Throws an `Error` naming the position of the first problem. */
export function evaluate(expression: string): number {
  const parser = new Parser(expression)
  const value = parser.sum()
  parser.skipSpaces()
  if (!parser.done()) parser.fail('unexpected character')
  return value
}

class Parser {
  private at = 0

  constructor(private readonly text: string) {}

  done(): boolean {
    return this.at >= this.text.length
  }

  fail(problem: string): never {
    throw new Error(`${problem} at position ${this.at + 1} of ${JSON.stringify(this.text)}`)
  }

  skipSpaces(): void {
    while (this.text[this.at] === ' ') this.at++
  }

  private peek(): string | undefined {
    this.skipSpaces()
    return this.text[this.at]
  }

  sum(): number {
    let value = this.product()
    for (let op = this.peek(); op === '+' || op === '-'; op = this.peek()) {
      this.at++
      const right = this.product()
      value = op === '+' ? value + right : value - right
    }
    return value
  }

  private product(): number {
    let value = this.unary()
    for (let op = this.peek(); op === '*' || op === '/' || op === '%'; op = this.peek()) {
      this.at++
      const right = this.unary()
      if (op !== '*' && right === 0) this.fail('division by zero')
      value = op === '*' ? value * right : op === '/' ? value / right : value % right
    }
    return value
  }

  private unary(): number {
    if (this.peek() === '-') {
      this.at++
      return -this.unary()
    }
    return this.atom()
  }

  private atom(): number {
    if (this.peek() === '(') {
      this.at++
      const value = this.sum()
      if (this.peek() !== ')') this.fail('expected ")"')
      this.at++
      return value
    }
    const match = /^\d+(\.\d+)?/.exec(this.text.slice(this.at))
    if (match === null) this.fail('expected a number')
    this.at += match[0].length
    return Number(match[0])
  }
}
