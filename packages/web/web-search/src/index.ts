import { type Context, Service } from '@dsh/cordis'

/** One search hit as every provider reports it: what the model reads, never fetched by the search itself. */
export interface SearchResult {
  title: string
  url: string
  snippet: string
}

export interface SearchOptions {
  /** At most this many results (a provider may return fewer). */
  count: number
  /** Aborted on cancel and on the tool's deadline. */
  signal: AbortSignal
}

declare module '@dsh/cordis' {
  interface Context {
    webSearch: WebSearch
  }
}

/**
 * Searches the web for the model (docs/architecture.md, "Web fetch and search"). Owns: sending one query to
 * one search service and returning its hits as title, URL and snippet. Must not own: fetching a hit (that is
 * `web_fetch`, through the network policy, only when the model asks), what the model is told, or where a
 * key is stored (ctx.credentials).
 */
export abstract class WebSearch extends Service {
  constructor(ctx: Context) {
    super(ctx, 'webSearch')
  }

  /** The service's name as the tool shows it (`SearXNG at https://search.example.org`, `Brave Search`). */
  abstract readonly label: string

  /** The hits for `query`; a failure is an Error whose message names the service and what went wrong. */
  abstract search(query: string, options: SearchOptions): Promise<SearchResult[]>
}
