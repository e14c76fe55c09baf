// The `web-app` row: serves the built browser app (dist/) through ctx.webserver. The app itself is plain
// static files talking to the host's API; swapping this row swaps the UI (docs/architecture.md, "Surfaces").
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import Schema from '@dsh/schemastery'

const built = join(dirname(fileURLToPath(import.meta.url)), 'dist')

export const name = 'web-app'
export const inject = ['webserver']
export const Config = Schema.object({
  dir: Schema.string()
    .default('')
    .description('Folder of a built app to serve instead of the bundled one (empty: apps/web/dist).'),
})

export function apply(ctx, config) {
  const dir = config.dir ? resolve(config.dir) : built
  // Fail loud but keep the API up: a checkout that skipped the build still answers, and says what to run.
  if (!existsSync(join(dir, 'index.html')))
    ctx.logger('web-app').warn(`the web app is not built (${dir}/index.html is missing): run npm run setup`)
  ctx.webserver.assets(ctx, dir)
}
