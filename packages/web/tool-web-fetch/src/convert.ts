import type { IncomingHttpHeaders } from 'node:http'

/** How a body is shown: HTML as markdown, text and JSON as they are, anything else not at all. */
export type Shape = 'html' | 'text' | 'binary'

export function contentType(headers: IncomingHttpHeaders): { mime: string; charset: string } {
  const raw = String(headers['content-type'] ?? '')
  const mime = raw.split(';')[0]!.trim().toLowerCase()
  const charset = /charset\s*=\s*"?([\w.:-]+)"?/i.exec(raw)?.[1]?.toLowerCase() ?? 'utf-8'
  return { mime, charset }
}

export function shapeOf(mime: string, body: Buffer): Shape {
  if (mime === 'text/html' || mime === 'application/xhtml+xml') return 'html'
  if (
    mime.startsWith('text/') ||
    mime === 'application/json' ||
    mime.endsWith('+json') ||
    mime.endsWith('+xml') ||
    mime === 'application/xml' ||
    mime === 'application/javascript' ||
    mime === 'application/x-ndjson' ||
    mime === 'application/yaml'
  )
    return 'text'
  // No type given: text when it decodes as UTF-8 without NUL bytes, HTML when it looks like it.
  if (!mime && !body.includes(0)) {
    const head = body.subarray(0, 512).toString('utf8').trimStart().toLowerCase()
    return head.startsWith('<!doctype html') || head.startsWith('<html') ? 'html' : 'text'
  }
  return 'binary'
}

export function decodeText(body: Buffer, charset: string): string {
  try {
    return new TextDecoder(charset).decode(body)
  } catch {
    return new TextDecoder('utf-8').decode(body)
  }
}

/**
 * Readable markdown of an HTML page: the article Readability finds (else the whole body), through Turndown.
 * The libraries are loaded on the first HTML page, not at boot.
 */
export async function htmlToMarkdown(html: string, url: string): Promise<{ title: string; markdown: string }> {
  const [{ parseHTML }, { Readability }, { default: TurndownService }] = await Promise.all([
    import('linkedom'),
    import('@mozilla/readability'),
    import('turndown'),
  ])
  const { document } = parseHTML(html)
  const title = (document.title ?? '').trim()
  let content: string | undefined
  try {
    // Readability changes the document it reads: give it its own.
    const article = new Readability(
      parseHTML(html).document as unknown as ConstructorParameters<typeof Readability>[0],
      { keepClasses: false },
    ).parse()
    if (article?.content && (article.textContent ?? '').trim().length > 0) content = article.content
  } catch {
    content = undefined
  }
  const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' })
  turndown.remove(['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed'] as never)
  // Links and images made absolute, so the model can fetch what a page points at.
  const { document: shown } = parseHTML(
    `<!doctype html><html><body>${content ?? document.body?.innerHTML ?? html}</body></html>`,
  )
  for (const [selector, attribute] of [
    ['a[href]', 'href'],
    ['img[src]', 'src'],
  ] as const)
    for (const element of shown.querySelectorAll(selector)) {
      try {
        element.setAttribute(attribute, new URL(element.getAttribute(attribute) ?? '', url).href)
      } catch {
        element.removeAttribute(attribute)
      }
    }
  const markdown = turndown
    .turndown(shown.body.innerHTML)
    .replace(/\n{3,}/g, '\n\n')
    .trim()
  return { title: title || '', markdown }
}
