import type { ApiResponse, MethodName, Methods } from '@dsh/web-protocol'
import { stream } from './stream.ts'

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

/**
 * Calls `POST /api/<method>`; the browser adds the sign-in cookie (HttpOnly: this script never sees it). A
 * refusal or failure throws ApiError with its code; a sign-in the host no longer accepts (expired, signed out)
 * puts the tab in `signed-out`, whose banner says how to sign in again (the draft and the page stay).
 */
export async function call<K extends MethodName>(
  method: K,
  params: Methods[K]['params'],
): Promise<Methods[K]['result']> {
  let response: Response
  try {
    response = await fetch(`/api/${method}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(params),
    })
  } catch {
    throw new ApiError('OFFLINE', 'dsh is not answering: is it still running?')
  }
  const body = (await response.json().catch(() => undefined)) as ApiResponse<Methods[K]['result']> | undefined
  if (!body) throw new ApiError(`HTTP_${response.status}`, `dsh answered ${response.status} ${response.statusText}`)
  if (!body.ok && body.error.code.startsWith('SIGN_IN_')) stream.signedOut()
  if (!body.ok) throw new ApiError(body.error.code, body.error.message)
  return body.result
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
