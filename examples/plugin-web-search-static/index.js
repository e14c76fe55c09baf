// An example dsh plugin (docs/extending.md, "Writing a dsh plugin"): a provider of an existing seam,
// ctx.webSearch (packages/web/web-search), the service the `web_search` tool asks. It answers from a fixed
// list of pages in its row's config — a team's bookmarks, an offline index — so it needs no account and no
// network. It imports nothing at run time: the service is provided through ctx.reflect.provide, which ends
// with the plugin's fiber. `@dsh/web-search` is a peer dependency for the contract it implements
// (`label`, `search(query, { count, signal })` returning `{ title, url, snippet }[]`).

export const name = 'web-search-static'

/**
 * @typedef {{ title: string, url: string, snippet: string }} Page
 * @param {import('@dsh/cordis').Context} ctx
 * @param {{ label?: string, pages?: Page[] }} config
 */
export function apply(ctx, config) {
  const pages = Array.isArray(config?.pages) ? config.pages : []
  pages.forEach((page, index) => {
    for (const key of ['title', 'url', 'snippet']) {
      if (typeof page?.[key] !== 'string')
        throw new Error(`web-search-static: config.pages[${index}].${key} must be a string`)
    }
  })
  const label = typeof config?.label === 'string' && config.label ? config.label : 'the static page list'
  ctx.reflect.provide('webSearch', {
    label,
    /** Pages whose title or snippet holds every word of the query (case-insensitive), in list order. */
    async search(query, { count, signal }) {
      signal?.throwIfAborted()
      const words = query.toLowerCase().split(/\s+/).filter(Boolean)
      const hits = pages.filter((page) => {
        const text = `${page.title} ${page.snippet}`.toLowerCase()
        return words.every((word) => text.includes(word))
      })
      return hits.slice(0, count).map(({ title, url, snippet }) => ({ title, url, snippet }))
    },
  })
}
