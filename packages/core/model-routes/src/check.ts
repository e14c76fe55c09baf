import { LlmError, type ImageBlock, type Llm, type Route } from '@dsh/llm'
import type { Session } from '@dsh/session'

/**
 * Images the user is sending with this step (the `user/message`s after the last `step/start`) that carry no
 * description. Images already in the history are left to the request transforms (attachments show a
 * text-only model a note in their place), or a session that once held an image could never continue on
 * a text-only route.
 */
export function newImages(session: Session): number {
  const events = session.events
  let start = events.length
  while (start > 0 && events[start - 1]!.type !== 'step/start') start--
  let count = 0
  for (const event of events.slice(start)) {
    if (event.type !== 'user/message') continue
    for (const block of (event.data as { content: { type: string }[] }).content) {
      if (block.type === 'image' && (block as ImageBlock).description === undefined) count++
    }
  }
  return count
}

/**
 * Why `route` cannot honour a request, or undefined. A request the route cannot serve as asked is refused
 * before any I/O instead of being sent with the option silently dropped.
 */
export function refusal(llm: Llm, route: Route, session: Session): LlmError | undefined {
  const name = `${route.provider}/${route.model}`
  if (!llm.providers().includes(route.provider)) {
    return new LlmError(
      'UNKNOWN_PROVIDER',
      `the route ${name} names provider "${route.provider}", which no mounted adapter serves (mounted: ${llm.providers().join(', ') || 'none'})`,
    )
  }
  const info = llm.describe(route)
  const effort = route.effort
  if (effort && !info.efforts?.includes(effort) && !(effort === 'off' && !info.reasoning)) {
    const supported = info.efforts?.length ? info.efforts.join(', ') : 'none'
    return new LlmError(
      'UNSUPPORTED',
      `model ${name} does not support reasoning effort "${effort}" (supported: ${supported})`,
    )
  }
  const images = info.images ? 0 : newImages(session)
  if (images) {
    return new LlmError(
      'UNSUPPORTED',
      `model ${name} does not read images: ${images === 1 ? 'an image' : `${images} images`} without a description cannot be sent to it (switch to a model that reads images, or describe the image)`,
    )
  }
  return undefined
}
