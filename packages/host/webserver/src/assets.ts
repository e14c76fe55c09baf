import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { extname, join, normalize, sep } from 'node:path'
import { WebError } from './errors.ts'

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
}

/**
 * The page may talk to its own origin only, may not be framed (clickjacking), and runs only its own
 * scripts. Inline styles are allowed: React sets style attributes.
 */
export const PAGE_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ')

async function fileAt(path: string): Promise<number | undefined> {
  try {
    const info = await stat(path)
    return info.isFile() ? info.size : undefined
  } catch {
    return undefined
  }
}

/**
 * Serves the built single-page app from `dir`: a file when one matches, `index.html` for any path
 * without an extension (client routes such as `/s/<id>`), 404 otherwise. Hashed assets are cached for
 * good; the page itself never is, so a rebuilt app is picked up on reload.
 */
export async function serveAsset(dir: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://host').pathname)
  const relative = normalize(pathname).replace(/^([/\\])+/, '')
  const candidate = join(dir, relative)
  if (candidate !== dir && !candidate.startsWith(dir + sep)) return notFound(res)
  let file = candidate
  let size = relative ? await fileAt(candidate) : undefined
  if (size === undefined) {
    if (extname(relative)) return notFound(res)
    file = join(dir, 'index.html')
    size = await fileAt(file)
    if (size === undefined)
      throw new WebError('UNAVAILABLE', `the web app is not built (no ${file}): run npm run setup`)
  }
  const type = TYPES[extname(file)] ?? 'application/octet-stream'
  res.setHeader('Content-Type', type)
  res.setHeader('Content-Length', size)
  res.setHeader(
    'Cache-Control',
    file.includes(`${sep}assets${sep}`) ? 'public, max-age=31536000, immutable' : 'no-store',
  )
  if (type.startsWith('text/html')) res.setHeader('Content-Security-Policy', PAGE_POLICY)
  if (req.method === 'HEAD') return void res.end()
  createReadStream(file).pipe(res)
}

function notFound(res: ServerResponse) {
  res.statusCode = 404
  res.setHeader('Content-Type', 'text/plain; charset=utf-8')
  res.end('not found\n')
}
