import type { ApiResponse, MethodName, Methods } from '@dsh/web-protocol'

const TOKEN_KEY = 'dsh.token'
let token = ''

/**
 * Takes the launch token from the URL fragment (`#token=…`, never sent to any server), keeps it in this
 * tab's sessionStorage and removes it from the address bar so it is not bookmarked or shared by accident.
 */
export function captureToken(): boolean {
  const match = /(?:^#|&)token=([A-Za-z0-9_-]+)/.exec(location.hash)
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, match[1]!)
    history.replaceState(history.state, '', location.pathname + location.search)
  }
  token = sessionStorage.getItem(TOKEN_KEY) ?? ''
  return !!token
}

export function currentToken(): string {
  return token
}

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

/** Calls `POST /api/<method>` with the launch token; a refusal or failure throws ApiError with its code. */
export async function call<K extends MethodName>(method: K, params: Methods[K]['params']): Promise<Methods[K]['result']> {
  let response: Response
  try {
    response = await fetch(`/api/${method}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify(params),
    })
  } catch {
    throw new ApiError('OFFLINE', 'dsh is not answering: is it still running?')
  }
  const body = (await response.json().catch(() => undefined)) as ApiResponse<Methods[K]['result']> | undefined
  if (!body) throw new ApiError(`HTTP_${response.status}`, `dsh answered ${response.status} ${response.statusText}`)
  if (!body.ok) throw new ApiError(body.error.code, body.error.message)
  return body.result
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
