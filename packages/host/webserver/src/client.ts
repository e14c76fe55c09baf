import { LINK_PATH } from './sign-in.ts'

/**
 * Signs a Node client (a test, a benchmark, a script) in with a link `dsh web` printed, as a browser would:
 * the code goes as `Authorization: Basic` (fetch refuses URLs with userinfo). Resolves with the `Cookie`
 * header to send on API calls and the `/ws` upgrade; a refused link rejects with the host's message.
 */
export async function signInWithLink(link: string): Promise<string> {
  const url = new URL(link)
  if (url.pathname !== LINK_PATH || !url.password)
    throw new Error(`not a dsh web sign-in link: ${url.origin}${url.pathname}`)
  const basic = Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString(
    'base64',
  )
  const response = await fetch(`${url.origin}${url.pathname}`, {
    headers: { authorization: `Basic ${basic}` },
    redirect: 'manual',
  })
  const setCookie = response.headers.get('set-cookie')
  const body = await response.text()
  if (response.status !== 303 || !setCookie) throw new Error(`sign-in refused (${response.status}): ${body.trim()}`)
  return setCookie.split(';')[0]!
}
