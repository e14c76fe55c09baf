// Writes the files generated from the protocol declarations (docs/architecture.md, "Surfaces"):
//   packages/sdk/sdk-protocol/protocol.schema.json   the SDK protocol as one JSON Schema document
//   python/sdk/dsh/protocol.py                      its types as TypedDicts, its constants
//   packages/host/web-protocol/web-protocol.schema.json   the web API and WebSocket frames
//   docs/headless-lines.schema.json                 every line of `dsh --json` (@dsh/headless-lines line-schema.ts)
// Usage: node --conditions=@dsh/source --import tsx scripts/protocol/generate.ts [--out DIR]
// (`npm run generate:protocol`). --out writes under another root: scripts/gates/protocol-generated.mjs
// generates into a temp folder and compares.
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import * as protocol from '../../packages/sdk/sdk-protocol/src/index.ts'
import * as web from '../../packages/host/web-protocol/src/schema.ts'
import * as headless from '../../packages/surfaces/headless-lines/src/line-schema.ts'
import { collectDefinitions, plain, referencing, type JsonObject } from './json-schema.ts'
import { pythonModule } from './python.ts'

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const { values } = parseArgs({ options: { out: { type: 'string' } } })
const root = resolve(values.out ?? repo)

const methods = protocol.CLIENT_METHOD_SCHEMAS
const notifications = protocol.SERVER_NOTIFICATION_SCHEMAS
const serverRequests = protocol.SERVER_REQUEST_SCHEMAS
const envelope = [protocol.RpcRequestSchema, protocol.RpcNotificationSchema, protocol.RpcResponseSchema]
const eventData = protocol.EVENT_DATA_SCHEMAS
const roots = [
  ...envelope,
  ...Object.values(methods).flatMap((m) => [m.params, m.result]),
  ...Object.values(notifications),
  ...Object.values(serverRequests).flatMap((m) => [m.params, m.result]),
  ...Object.values(eventData),
]
const definitions = new Map(
  [...collectDefinitions(roots)]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([title, schema]) => [title, referencing(schema, '#/$defs/')]),
)
const ref = (schema: { title?: string }) => ({ $ref: `#/$defs/${schema.title}` })
const pair = (entry: { params: { title?: string }; result: { title?: string } }) => ({
  params: ref(entry.params),
  result: ref(entry.result),
})

const document: JsonObject = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'dsh SDK protocol',
  description:
    'Newline-delimited JSON-RPC 2.0 on stdio (the spec: packages/sdk/sdk-protocol/README.md). Generated from the TypeBox declarations of @dsh/sdk-protocol; do not edit.',
  protocolVersion: protocol.PROTOCOL_VERSION,
  errors: { ...protocol.RPC_ERRORS },
  methods: Object.fromEntries(Object.entries(methods).map(([name, entry]) => [name, pair(entry)])),
  notifications: Object.fromEntries(Object.entries(notifications).map(([name, schema]) => [name, ref(schema)])),
  serverRequests: Object.fromEntries(Object.entries(serverRequests).map(([name, entry]) => [name, pair(entry)])),
  eventData: Object.fromEntries(Object.entries(eventData).map(([kind, schema]) => [kind, ref(schema)])),
  $defs: Object.fromEntries(definitions),
}

const python = pythonModule({
  doc: 'The SDK wire protocol: every params, result and notification as a TypedDict, and the protocol constants.',
  constants: [
    ['PROTOCOL_VERSION', protocol.PROTOCOL_VERSION, 'The protocol version this SDK speaks.'],
    ...Object.entries(protocol.RPC_ERRORS).map(([name, code]) => [name, code] as [string, number]),
    ['CLIENT_METHODS', [...protocol.CLIENT_METHODS], 'The requests a client may send.'],
    ['SERVER_NOTIFICATIONS', Object.keys(notifications), 'The notifications the runtime sends.'],
    ['SERVER_REQUESTS', Object.keys(serverRequests), 'The requests the runtime sends to the client.'],
    ['APPROVAL_ANSWERS', [...protocol.APPROVAL_ANSWERS], 'What a client may answer to approval/request.'],
  ],
  definitions,
})

const webMethods = web.WEB_METHOD_SCHEMAS
const webRoots = [
  ...Object.values(webMethods).flatMap((m) => [m.params, m.result]),
  web.ClientMessageSchema,
  web.FrameSchema,
]
const webDefinitions = new Map(
  [...collectDefinitions(webRoots)]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([title, schema]) => [title, referencing(schema, '#/$defs/')]),
)
const webDocument: JsonObject = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'dsh web protocol',
  description:
    'POST /api/<method> params and results, and the WebSocket messages (@dsh/web-protocol). Generated from its TypeBox declarations; do not edit.',
  methods: Object.fromEntries(
    Object.entries(webMethods).map(([name, entry]) => [
      name,
      { params: referencing(plain(entry.params), '#/$defs/'), result: referencing(plain(entry.result), '#/$defs/') },
    ]),
  ),
  clientMessage: { $ref: '#/$defs/ClientMessage' },
  frame: { $ref: '#/$defs/Frame' },
  $defs: Object.fromEntries(webDefinitions),
}

const headlessDefinitions = new Map(
  [...collectDefinitions([headless.HeadlessLineSchema])]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([title, schema]) => [title, referencing(schema, '#/$defs/')]),
)
const headlessDocument: JsonObject = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'dsh --json lines',
  description:
    'Each stdout line of `dsh --json "task"`: one EventLine per session event appended, then one ResultLine. Generated from @dsh/headless-lines (src/line-schema.ts); do not edit.',
  version: headless.HEADLESS_LINES_VERSION,
  $ref: '#/$defs/HeadlessLine',
  $defs: Object.fromEntries(headlessDefinitions),
}

const files: Record<string, string> = {
  'docs/headless-lines.schema.json': JSON.stringify(headlessDocument, null, 2) + '\n',
  'packages/host/web-protocol/web-protocol.schema.json': JSON.stringify(webDocument, null, 2) + '\n',
  'packages/sdk/sdk-protocol/protocol.schema.json': JSON.stringify(document, null, 2) + '\n',
  'python/sdk/dsh/protocol.py': python,
}
for (const [path, text] of Object.entries(files)) {
  const file = join(root, path)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, text)
}
