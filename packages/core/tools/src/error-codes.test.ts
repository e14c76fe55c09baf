import { expect, test } from 'vitest'
import { isToolErrorCode, TOOL_ERROR_CODES, ToolError, type ToolDefinition, type ToolErrorCode } from './index.ts'

test('ToolErrorCode is closed: an unlisted code does not compile, as a thrown ToolError or a returned error', () => {
  // @ts-expect-error 'QUOTA_GONE' is not a ToolErrorCode
  const thrown = new ToolError('QUOTA_GONE', 'no more')
  const tool: ToolDefinition = {
    name: 'made_up',
    description: 'Returns an error with a code nobody listed.',
    parameters: { type: 'object', properties: {} },
    // @ts-expect-error 'MADE_UP' is not a ToolErrorCode
    execute: async () => ({ content: [], error: { code: 'MADE_UP', message: 'x' } }),
  }
  const listed: ToolErrorCode = 'FS_NOT_FOUND'
  expect([thrown.code, tool.name, listed]).toEqual(['QUOTA_GONE', 'made_up', 'FS_NOT_FOUND'])
})

test('isToolErrorCode accepts exactly the listed codes', () => {
  expect(TOOL_ERROR_CODES.every(isToolErrorCode)).toBe(true)
  for (const other of ['QUOTA_GONE', 'ENOENT', 'fs_not_found', '', 42, undefined])
    expect(isToolErrorCode(other)).toBe(false)
  expect(new Set(TOOL_ERROR_CODES).size).toBe(TOOL_ERROR_CODES.length)
})
