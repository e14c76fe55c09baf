// The HTTP server: records every request first, then routes it to a protocol and answers with the next
// scripted reply (queue, then responder, then — with `repeat` — the last reply). Nothing scripted is a loud
// 500: the mock never invents an answer.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  anthropicContextOverflow,
  anthropicError,
  anthropicMessage,
  anthropicModels,
  anthropicStreamFrames,
} from './anthropic-wire.ts'
import { planReply, type ReplyPlan } from './chunking.ts'
import {
  openaiCompletion,
  openaiContextOverflow,
  openaiError,
  openaiModels,
  openaiStreamFrames,
  type OpenAIDialect,
} from './openai-wire.ts'
import { MockServerError, resolveOptions, type MockServerOptions } from './options.ts'
import { checkReply, checkScript } from './script.ts'
import { sendJson, sendStream } from './transport.ts'
import type { MockReply, MockResponder, MockServer, RecordedRequest } from './types.ts'

const CHAT_PATHS = ['/chat/completions', '/v1/chat/completions']
const MODEL_PATHS = ['/models', '/v1/models']

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = []
  for await (const part of req) parts.push(part as Buffer)
  return Buffer.concat(parts)
}

function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
  return headers
}

function parseBody(raw: Buffer): { body: unknown; json: boolean } {
  if (!raw.length) return { body: undefined, json: false }
  const text = raw.toString('utf8')
  try {
    return { body: JSON.parse(text), json: true }
  } catch {
    return { body: text, json: false }
  }
}

export async function startMockServer(input: Partial<MockServerOptions> = {}): Promise<MockServer> {
  const options = resolveOptions(input)
  const queue: MockReply[] = []
  const requests: RecordedRequest[] = []
  const waiters = new Set<() => void>()
  let responder: MockResponder | undefined
  let last: MockReply | undefined
  const startedAt = new Date()
  const created = Math.floor(startedAt.getTime() / 1000)

  const dialectOf = (pathname: string): OpenAIDialect =>
    options.openaiDialect !== 'by-path' ? options.openaiDialect : pathname.startsWith('/v1/') ? 'openai' : 'deepseek'

  function nextReply(request: RecordedRequest): MockReply | undefined {
    let reply = queue.shift()
    if (!reply && responder)
      reply = checkReply(responder(request), `the responder's reply to request #${request.index}`)
    if (!reply && options.repeat) reply = last
    if (reply) last = reply
    return reply
  }

  /** An error the provider would send, in the shape of the request's protocol. */
  function providerError(
    res: ServerResponse,
    request: RecordedRequest,
    status: number,
    override: { message?: string; type?: string; code?: string } = {},
    extra: Record<string, string> = {},
    delayMs?: number,
  ) {
    const requestId = `req_mock_${request.index}`
    if (request.protocol === 'anthropic')
      return sendJson(
        res,
        request,
        status,
        anthropicError(status, requestId, override),
        { 'request-id': requestId, ...extra },
        delayMs,
      )
    return sendJson(
      res,
      request,
      status,
      openaiError(status, dialectOf(request.path.split('?')[0]), override),
      { 'x-request-id': requestId, ...extra },
      delayMs,
    )
  }

  async function answer(res: ServerResponse, request: RecordedRequest, rawBytes: number) {
    let reply: MockReply | undefined
    try {
      reply = nextReply(request)
    } catch (error) {
      return providerError(res, request, 500, {
        message: `llm-mock-server: the responder failed for request #${request.index}: ${(error as Error).message}`,
      })
    }
    if (!reply)
      return providerError(res, request, 500, {
        message: `llm-mock-server: no scripted reply for request #${request.index} (${request.method} ${request.path})`,
      })
    const anthropic = request.protocol === 'anthropic'
    const requestId = `req_mock_${request.index}`
    const idHeader: Record<string, string> = { [anthropic ? 'request-id' : 'x-request-id']: requestId }
    if (reply.error) {
      const retryAfter: Record<string, string> =
        reply.error.retryAfter !== undefined ? { 'retry-after': String(reply.error.retryAfter) } : {}
      return providerError(res, request, reply.error.status, reply.error, retryAfter, reply.delayMs)
    }
    const requested = options.contextWindowTokens + Math.ceil(rawBytes / options.charsPerToken)
    if (reply.contextOverflow) {
      const body = anthropic
        ? anthropicContextOverflow(options.contextWindowTokens, requested, requestId)
        : openaiContextOverflow(dialectOf(request.path.split('?')[0]), options.contextWindowTokens, requested)
      return sendJson(res, request, 400, body, idHeader, reply.delayMs)
    }
    const plan: ReplyPlan = planReply(reply, {
      chunkChars: options.chunkChars,
      toolArgumentPieces: options.toolArgumentPieces,
      charsPerToken: options.charsPerToken,
      requestBytes: rawBytes,
      toolCallId: (i) => (anthropic ? `toolu_mock_${request.index}_${i}` : `call_mock_${request.index}_${i}`),
    })
    const body = request.body as Record<string, any>
    const model = typeof body.model === 'string' ? body.model : options.models[0]
    const stream = body.stream === true
    if (anthropic) {
      const meta = {
        id: `msg_mock_${request.index}`,
        model,
        signature: Buffer.from(`llm-mock-server signature #${request.index}`).toString('base64'),
      }
      if (stream) return sendStream(res, request, anthropicStreamFrames(plan, meta), reply, idHeader)
      let message: unknown
      try {
        message = anthropicMessage(plan, meta)
      } catch (error) {
        return providerError(res, request, 500, {
          message: `llm-mock-server: cannot answer request #${request.index}: ${(error as Error).message}`,
        })
      }
      return sendJson(res, request, 200, message, idHeader, reply.delayMs)
    }
    const meta = {
      id: `chatcmpl-mock-${request.index}`,
      model,
      created: Math.floor(Date.now() / 1000),
      dialect: dialectOf(request.path.split('?')[0]),
      includeUsage: body.stream_options?.include_usage === true,
    }
    if (stream) return sendStream(res, request, openaiStreamFrames(plan, meta), reply, idHeader)
    return sendJson(res, request, 200, openaiCompletion(plan, meta), idHeader, reply.delayMs)
  }

  async function control(req: IncomingMessage, res: ServerResponse, pathname: string) {
    const reply = (status: number, body: unknown) => {
      const text = JSON.stringify(body)
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) })
      res.end(text)
    }
    const raw = await readBody(req)
    try {
      if (req.method === 'POST' && pathname === '/__mock/enqueue') {
        const { body, json } = parseBody(raw)
        if (!json)
          throw new MockServerError(
            'MOCK_BAD_SCRIPT',
            'llm-mock-server: POST /__mock/enqueue wants a JSON array of replies',
          )
        mock.enqueue(...checkScript(body, 'POST /__mock/enqueue body'))
        return reply(200, { pending: queue.length })
      }
      if (req.method === 'GET' && pathname === '/__mock/requests') return reply(200, requests)
      if (req.method === 'POST' && pathname === '/__mock/reset') {
        mock.reset()
        return reply(200, { pending: 0 })
      }
      return reply(404, {
        error: {
          code: 'MOCK_UNKNOWN_CONTROL',
          message: `llm-mock-server: no control endpoint ${req.method} ${pathname} (POST /__mock/enqueue, GET /__mock/requests, POST /__mock/reset)`,
        },
      })
    } catch (error) {
      return reply(400, {
        error: { code: (error as MockServerError).code ?? 'MOCK_BAD_SCRIPT', message: (error as Error).message },
      })
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const receivedAt = performance.now()
    const path = req.url ?? '/'
    const pathname = path.split('?')[0]
    if (pathname.startsWith('/__mock/')) return control(req, res, pathname)
    const raw = await readBody(req)
    const headers = flattenHeaders(req)
    const protocol =
      pathname === '/v1/messages' || (!CHAT_PATHS.includes(pathname) && headers['anthropic-version'] !== undefined)
        ? 'anthropic'
        : 'openai'
    const { body, json } = parseBody(raw)
    const request: RecordedRequest = {
      index: requests.length,
      protocol,
      method: req.method ?? 'GET',
      path,
      headers,
      body,
      timing: { receivedAt },
    }
    requests.push(request)
    // A waiter that is satisfied removes itself; deleting the visited entry is safe while iterating a Set.
    for (const wake of waiters) wake()

    const method = request.method
    if (method === 'GET' && MODEL_PATHS.includes(pathname)) {
      const list =
        protocol === 'anthropic'
          ? anthropicModels(options.models, startedAt.toISOString())
          : openaiModels(options.models, dialectOf(pathname), created)
      return sendJson(res, request, 200, list, {})
    }
    const isChat = method === 'POST' && (CHAT_PATHS.includes(pathname) || pathname === '/v1/messages')
    if (!isChat)
      return providerError(res, request, 404, {
        message: `llm-mock-server: no such endpoint (${method} ${pathname}); it serves POST ${CHAT_PATHS.join(', ')}, POST /v1/messages and GET ${MODEL_PATHS.join(', ')}`,
      })
    if (!json || typeof body !== 'object' || body === null)
      return providerError(res, request, 400, {
        message: `llm-mock-server: request #${request.index} has no JSON object body`,
      })
    return answer(res, request, raw.length)
  }

  const server = createServer((req, res) => {
    // A client that hangs up mid-response must not take the server down.
    res.on('error', () => {})
    handle(req, res).catch((error) => {
      if (res.headersSent) return res.destroy()
      res.writeHead(500, { 'content-type': 'text/plain' })
      res.end(`llm-mock-server: internal failure: ${(error as Error).stack ?? error}`)
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  let closing: Promise<void> | undefined
  const host = options.host.includes(':') ? `[${options.host}]` : options.host

  const mock: MockServer = {
    url: `http://${host}:${port}`,
    requests,
    enqueue(...replies) {
      queue.push(...replies.map((reply, i) => checkReply(reply, `enqueue() argument ${i}`)))
    },
    respondWith(fn) {
      responder = fn
    },
    pending: () => queue.length,
    waitForRequests(count, timeoutMs = options.waitTimeoutMs) {
      if (requests.length >= count) return Promise.resolve(requests)
      return new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < count) return
          done()
          resolve(requests)
        }
        const timer = setTimeout(() => {
          done()
          reject(
            new MockServerError(
              'MOCK_TIMEOUT',
              `llm-mock-server: ${requests.length} of ${count} requests arrived within ${timeoutMs} ms`,
            ),
          )
        }, timeoutMs)
        const done = () => {
          clearTimeout(timer)
          waiters.delete(check)
        }
        waiters.add(check)
      })
    },
    reset() {
      queue.length = 0
      requests.length = 0
      responder = undefined
      last = undefined
    },
    close() {
      // Idempotent: a test may close early and its afterEach close again.
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()))
        // Stalled streams and idle keep-alive sockets would otherwise hold close() open forever.
        server.closeAllConnections()
      })
      return closing
    },
  }
  return mock
}
