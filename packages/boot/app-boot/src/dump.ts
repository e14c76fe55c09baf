import { Document, type YAMLMap } from 'yaml'
import { walkRows, type ComposedRow, type Composition, type Touch } from './compose.ts'
import { yamlCustomTags } from './patch-file.ts'

function describeTouch(composition: Composition, touch: Touch): string {
  const layer = composition.layers[touch.layer]!
  const where = layer.label.startsWith('bundle ')
    ? `${layer.label}:${touch.origin.line}`
    : `${layer.label} ${touch.origin.file}:${touch.origin.line}`
  return `${where} (${touch.keys.join(', ')})`
}

function rowObject(row: ComposedRow): Record<string, unknown> {
  const out: Record<string, unknown> = { id: row.id }
  if (row.name !== undefined) out.name = row.name
  if (row.disabled !== undefined) out.disabled = row.disabled
  if (row.inject !== undefined) out.inject = row.inject
  if (row.isolate !== undefined) out.isolate = row.isolate
  if (row.config !== undefined) out.config = row.config
  if (row.children) out.children = row.children.map(rowObject)
  return out
}

function annotate(composition: Composition, rows: ComposedRow[], nodes: YAMLMap[]): void {
  rows.forEach((row, index) => {
    const node = nodes[index]!
    node.commentBefore = ` ${row.touches.map((touch) => describeTouch(composition, touch)).join('; ')}`
    if (row.children)
      annotate(composition, row.children, ((node.get('children', true) as any)?.items ?? []) as YAMLMap[])
  })
}

/** The composed tree as YAML, each row preceded by a comment naming the layers that touched it. */
export function dumpComposition(composition: Composition, header: string[] = []): string {
  const doc = new Document(composition.rows.map(rowObject), { customTags: yamlCustomTags })
  annotate(composition, composition.rows, ((doc.contents as any)?.items ?? []) as YAMLMap[])
  const layerLines = composition.layers.map((layer, index) => ` layer ${index + 1}: ${layer.label} — ${layer.file}`)
  doc.commentBefore = [...header.map((line) => ` ${line}`), ...layerLines].join('\n')
  return doc.toString({ lineWidth: 0 })
}

/** The enabled rows of the model registry (`@dsh/llm`) in a composition. */
export function llmRows(composition: Composition): ComposedRow[] {
  return enabled(composition).filter((row) => row.name === '@dsh/llm')
}

function enabled(composition: Composition): ComposedRow[] {
  return [...walkRows(composition.rows)].map(([row]) => row).filter((row) => row.disabled !== true)
}

/**
 * The dump says loudly when model requests would leave without the check that they are what the log derives
 * (docs/architecture.md, "The session log"): an llm row marked `unchecked`, or no `@dsh/invariants` row (boot
 * then refuses the tree).
 */
export function requestCheckMarks(composition: Composition): string[] {
  const rows = llmRows(composition)
  const unchecked = rows.filter((row) => (row.config as any)?.unchecked === true)
  const marks = unchecked.map(
    (row) => `UNCHECKED: row "${row.id}" sends model requests with no check against the session log (unchecked: true)`,
  )
  const guarded = enabled(composition).some((row) => row.name === '@dsh/invariants')
  if (rows.length > unchecked.length && !guarded)
    marks.push(
      'NO REQUEST CHECK: no enabled @dsh/invariants row; boot refuses this tree unless the llm row says unchecked: true',
    )
  return marks
}
