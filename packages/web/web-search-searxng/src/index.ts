import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import { WebSearch, type SearchOptions, type SearchResult } from '@dsh/web-search'

export interface Config {
  url: string
  timeoutMs: number
  language: string
  safesearch: 0 | 1 | 2
}

/** One hit as SearXNG's JSON format returns it (only the fields read). */
interface SearxngHit {
  url?: unknown
  title?: unknown
  content?: unknown
}

/**
 * ctx.webSearch on a self-hosted SearXNG instance (`GET <url>/search?q=…&format=json`): no account, no key.
 * The instance is the person's configuration, not the model's, so it is reached directly (like a model
 * provider), not through the network policy that guards what the model names.
 */
export default class SearxngSearch extends WebSearch {
  static Config: Schema<Partial<Config>, Config> = Schema.object({
    url: Schema.string()
      .pattern(/^(https?:\/\/[^\s]+)?$/)
      .default('')
      .description(
        'Base URL of the SearXNG instance (`http://localhost:8888`); its settings.yml must list `json` under search.formats. Required: the row refuses to start without it.',
      ),
    timeoutMs: Schema.natural().min(1).default(15_000).description('Deadline of one search request (ms).'),
    language: Schema.string()
      .default('')
      .description('SearXNG `language` parameter (`en`, `de-CH`); empty: the instance default.'),
    safesearch: Schema.union([0, 1, 2]).default(1).description('SearXNG `safesearch`: 0 off, 1 moderate, 2 strict.'),
  })

  readonly label: string

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx)
    if (!config.url)
      throw new Error(
        'web-search-searxng: config.url is empty: set it to your SearXNG instance (`config: { url: http://localhost:8888 }` on the web-search row)',
      )
    this.label = `SearXNG at ${config.url}`
  }

  async search(query: string, options: SearchOptions): Promise<SearchResult[]> {
    const url = new URL('search', this.config.url.endsWith('/') ? this.config.url : this.config.url + '/')
    url.searchParams.set('q', query)
    url.searchParams.set('format', 'json')
    url.searchParams.set('safesearch', String(this.config.safesearch))
    if (this.config.language) url.searchParams.set('language', this.config.language)
    const signal = AbortSignal.any([options.signal, AbortSignal.timeout(this.config.timeoutMs)])
    let response: Response
    try {
      response = await fetch(url, { signal, headers: { accept: 'application/json' } })
    } catch (error) {
      const why =
        signal.aborted && !options.signal.aborted
          ? `no answer within ${this.config.timeoutMs} ms`
          : (error as Error).message
      throw new Error(`${this.label}: the search failed (${why})`, { cause: error })
    }
    const text = await response.text()
    if (response.status === 403)
      throw new Error(`${this.label} refused the JSON format (403): add \`json\` to search.formats in its settings.yml`)
    if (!response.ok) throw new Error(`${this.label} answered ${response.status}: ${text.slice(0, 200)}`)
    let body: { results?: unknown }
    try {
      body = JSON.parse(text)
    } catch {
      throw new Error(`${this.label} did not answer JSON (is \`url\` the instance's base URL?)`)
    }
    if (!Array.isArray(body.results)) throw new Error(`${this.label} answered JSON without a \`results\` list`)
    return (body.results as SearxngHit[])
      .filter((hit) => typeof hit.url === 'string' && /^https?:\/\//.test(hit.url))
      .slice(0, options.count)
      .map((hit) => ({
        title: typeof hit.title === 'string' ? hit.title : '',
        url: hit.url as string,
        snippet: typeof hit.content === 'string' ? hit.content : '',
      }))
  }
}
