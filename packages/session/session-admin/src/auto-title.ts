import type { Context } from '@dsh/cordis'
import { BlockAssembler, emptyUsage, type LlmRequest, type Usage } from '@dsh/llm'
import type { Session, SessionEventMap } from '@dsh/session'
import { titleFromAnswer } from './title-text.ts'

/**
 * The one auxiliary title request: logged as `title/request` (durable before it is paid for), sent with
 * origin purpose `title` so the boundary check derives it from that event, ended by `title/response` with
 * its usage. A generated title is logged as `session/title` unless the user named the session meanwhile.
 * Never throws: a failed or slow request leaves the first prompt standing in, and says why in the log.
 */
export async function requestTitle(
  ctx: Context,
  session: Session,
  ask: SessionEventMap['title/request'],
  limits: { titleChars: number; timeoutMs: number },
): Promise<void> {
  const logged = session.append('title/request', ask)
  await session.flush()
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), limits.timeoutMs)
  const request: LlmRequest = {
    route: ask.route,
    system: ask.system,
    messages: [{ role: 'user', content: [{ type: 'text', text: ask.prompt }] }],
    tools: [],
    maxOutputTokens: ask.maxOutputTokens,
    signal: controller.signal,
    origin: { sessionId: session.id, purpose: 'title' },
  }
  let usage: Usage = emptyUsage()
  let outcome: { ok: true; title: string } | { ok: false; reason: string }
  try {
    const assembler = new BlockAssembler(ask.route.provider)
    for await (const chunk of ctx.llm.stream(request)) {
      assembler.push(chunk)
      if (assembler.isFinished) break
    }
    const answer = assembler.result()
    usage = answer.usage
    const text = answer.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('')
    const title = titleFromAnswer(text, limits.titleChars)
    if (answer.error) outcome = { ok: false, reason: `${answer.error.code}: ${answer.error.message}` }
    else if (controller.signal.aborted) outcome = { ok: false, reason: `no title within ${limits.timeoutMs} ms` }
    else outcome = title ? { ok: true, title } : { ok: false, reason: 'the answer held no title' }
  } catch (error) {
    outcome = {
      ok: false,
      reason: controller.signal.aborted
        ? `no title within ${limits.timeoutMs} ms`
        : error instanceof Error
          ? error.message
          : String(error),
    }
  } finally {
    clearTimeout(timer)
  }
  if (session.closed) return
  session.append('title/response', { requestSeq: logged.seq, usage, ...outcome })
  const named = session.all('session/title').some((event) => event.data.source === 'user')
  if (outcome.ok && !named) session.append('session/title', { title: outcome.title, source: 'model' })
  await session.flush()
}
