const ORIGINS = ['user', 'workspace', 'acp', 'sdk', 'cli']
const REASONS = ['connected', 'restarted', 'list_changed']
const STATES = ['started', 'failed', 'crashed', 'stopped', 'refused']

const isTool = (tool: any) => typeof tool?.name === 'string' && typeof tool.tool === 'string' && typeof tool.description === 'string'

export const validCatalog = (data: any): string | undefined =>
  typeof data?.server === 'string' && ORIGINS.includes(data.origin) && REASONS.includes(data.reason) && Array.isArray(data.tools) && data.tools.every(isTool)
    ? undefined
    : `an mcp/catalog has server (string), origin (${ORIGINS.join(', ')}), reason (${REASONS.join(', ')}) and tools ({ name, tool, description } strings)`

export const validStatus = (data: any): string | undefined =>
  typeof data?.server === 'string' && STATES.includes(data.state) && (data.message === undefined || typeof data.message === 'string')
    ? undefined
    : `an mcp/status has server (string), state (${STATES.join(', ')}) and maybe message (string)`

const isStringRecord = (value: any) => !!value && typeof value === 'object' && !Array.isArray(value) && Object.values(value).every((item) => typeof item === 'string')

export const validPrompt = (data: any): string | undefined =>
  typeof data?.server === 'string' && typeof data.prompt === 'string' && isStringRecord(data.arguments) ? undefined : 'an mcp/prompt has server and prompt (strings) and arguments (names to strings)'
