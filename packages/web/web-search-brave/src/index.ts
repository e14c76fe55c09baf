import type { Context } from '@dsh/cordis'
import type {} from '@dsh/credentials'
import Schema from '@dsh/schemastery'
import { WebSearch, type SearchOptions, type SearchResult } from '@dsh/web-search'

export interface Config {
  apiKeyName: string
  baseUrl: string
  timeoutMs: number
  country: string
}

interface BraveHit {
  url?: unknown
  title?: unknown
  description?: unknown
}

/** Brave's snippets mark the matched words with <strong>; the model reads plain text. */
const plain = (text: string) =>
  text
    .replace(/<\/?strong>/g, '')
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')

/**
 * ctx.webSearch on the Brave Search API (`GET <baseUrl>/res/v1/web/search`, header `X-Subscription-Token`).
 * The key is resolved from ctx.credentials on every request (so it is never in settings, a command's
 * environment — `*KEY*` names are never inherited — or the log), and redacted from every error message.
 */
export default class BraveSearch extends WebSearch {
  static inject = ['credentials']
  static Config: Schema<Partial<Config>, Config> = Schema.object({
    apiKeyName: Schema.string()
      .pattern(/^[A-Z_][A-Z0-9_]*$/)
      .default('BRAVE_SEARCH_API_KEY')
      .description(
        'Credential holding the Brave Search API key (environment, then $DSH_HOME/.credentials.yaml, then .env).',
      ),
    baseUrl: Schema.string()
      .pattern(/^https?:\/\/[^\s]+$/)
      .default('https://api.search.brave.com')
      .description('Base URL of the Brave Search API.'),
    timeoutMs: Schema.natural().min(1).default(15_000).description('Deadline of one search request (ms).'),
    country: Schema.string().default('').description('Brave `country` parameter (`us`, `de`); empty: Brave decides.'),
  })

  readonly label = 'Brave Search'

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx)
  }

  async search(query: string, options: SearchOptions): Promise<SearchResult[]> {
    const key = await this.ctx.credentials.resolve(this.config.apiKeyName)
    if (!key)
      throw new Error(
        `${this.label} needs an API key: ${this.config.apiKeyName} is not set; ${this.ctx.credentials.howToSet(this.config.apiKeyName)}`,
      )
    const url = new URL(
      'res/v1/web/search',
      this.config.baseUrl.endsWith('/') ? this.config.baseUrl : this.config.baseUrl + '/',
    )
    url.searchParams.set('q', query)
    url.searchParams.set('count', String(Math.min(options.count, 20)))
    if (this.config.country) url.searchParams.set('country', this.config.country)
    const signal = AbortSignal.any([options.signal, AbortSignal.timeout(this.config.timeoutMs)])
    const redact = (text: string) => this.ctx.credentials.redact(text).split(key).join('«redacted»')
    let response: Response
    try {
      response = await fetch(url, {
        signal,
        headers: { accept: 'application/json', 'x-subscription-token': key },
      })
    } catch (error) {
      const why =
        signal.aborted && !options.signal.aborted
          ? `no answer within ${this.config.timeoutMs} ms`
          : (error as Error).message
      throw new Error(redact(`${this.label}: the search failed (${why})`), { cause: error })
    }
    const text = await response.text()
    if (response.status === 401 || response.status === 403)
      throw new Error(`${this.label} refused the key in ${this.config.apiKeyName} (${response.status})`)
    if (!response.ok) throw new Error(redact(`${this.label} answered ${response.status}: ${text.slice(0, 200)}`))
    let body: { web?: { results?: unknown } }
    try {
      body = JSON.parse(text)
    } catch {
      throw new Error(`${this.label} did not answer JSON`)
    }
    const hits = body.web?.results ?? []
    if (!Array.isArray(hits)) throw new Error(`${this.label} answered JSON without a \`web.results\` list`)
    return (hits as BraveHit[])
      .filter((hit) => typeof hit.url === 'string' && /^https?:\/\//.test(hit.url))
      .slice(0, options.count)
      .map((hit) => ({
        title: typeof hit.title === 'string' ? plain(hit.title) : '',
        url: hit.url as string,
        snippet: typeof hit.description === 'string' ? plain(hit.description) : '',
      }))
  }
}
