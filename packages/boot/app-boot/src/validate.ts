import { at } from './errors.ts'
import { walkRows, type Composition } from './compose.ts'
import { containsJs } from './js-expr.ts'

/**
 * Checks each row's config against its plugin's schemastery `Config` before anything is mounted, so a type
 * error names the layer line that set the config. Rows whose config holds `!!js` are checked by cordis when
 * the expression has been evaluated (boot then fails loudly with the row id).
 */
export function validateConfigs(composition: Composition, plugins: Map<string, any>): void {
  for (const [row] of walkRows(composition.rows)) {
    if (row.children || !row.name || containsJs(row.config)) continue
    const schema = plugins.get(row.name)?.Config
    const validate = schema?.['~standard']?.validate
    if (typeof validate !== 'function') continue
    const result = validate(row.config)
    if (result && 'then' in result) continue
    if (result.issues?.length) {
      const issue = result.issues[0]
      const path = issue.path?.length
        ? `config.${issue.path.map((p: any) => (typeof p === 'object' ? p.key : p)).join('.')}`
        : 'config'
      throw at(row.configOrigin, `row "${row.id}" (${row.name}): ${path}: ${issue.message.replace(/^\$\.\S*\s/, '')}`)
    }
    const known = schema.type === 'object' && schema.dict ? Object.keys(schema.dict) : undefined
    const given =
      row.config && typeof row.config === 'object' && !Array.isArray(row.config) ? Object.keys(row.config) : []
    const unknown = known && given.find((key) => !known.includes(key))
    if (unknown) {
      throw at(
        row.configOrigin,
        `row "${row.id}" (${row.name}): config.${unknown} is not a setting of this plugin (known: ${known.join(', ') || 'none'})`,
      )
    }
  }
}
