import { MAX_TOOL_NAME_LENGTH, toolName, toolNames } from 'dsh-mcp'
import { describe, expect, it } from 'vitest'

const VALID = /^[A-Za-z0-9_-]{1,64}$/

describe('tool names', () => {
  it('keeps a name that already fits as <server>__<tool>', () => {
    expect(toolName('github', 'create_issue')).toBe('github__create_issue')
    expect(toolName('fs', 'read-file')).toBe('fs__read-file')
  })

  it('normalizes other characters and adds a hash of the original name, so look-alikes stay apart', () => {
    const dotted = toolName('fs', 'files.read')
    const slashed = toolName('fs', 'files/read')
    expect(dotted).toMatch(/^fs__files_read_[0-9a-f]{8}$/)
    expect(slashed).toMatch(/^fs__files_read_[0-9a-f]{8}$/)
    expect(dotted).not.toBe(slashed)
    // The underscore spelling is a different tool and keeps its plain name.
    expect(toolName('fs', 'files_read')).toBe('fs__files_read')
    expect(toolName('fs', 'ファイル')).toMatch(/^fs_{7}[0-9a-f]{8}$/)
  })

  it('cuts long names to 64 characters with the hash, the same on every call', () => {
    const long = 'x'.repeat(100)
    const name = toolName('server-with-a-long-name', long)
    expect(name).toHaveLength(MAX_TOOL_NAME_LENGTH)
    expect(name).toMatch(VALID)
    expect(name).toBe(toolName('server-with-a-long-name', long))
    expect(toolName('server-with-a-long-name', `${long}y`)).not.toBe(name)
  })

  it('gives every tool of a server a distinct valid name', () => {
    const tools = ['a.b', 'a/b', 'a_b', 'a-b', 'A.B', '', 'x'.repeat(70), `${'x'.repeat(70)}z`]
    const names = toolNames('srv', tools)
    expect(new Set(names).size).toBe(tools.length)
    for (const name of names) expect(name).toMatch(VALID)
    expect(names.slice(2, 4)).toEqual(['srv__a_b', 'srv__a-b'])
  })
})
