import { shortenMessage } from '@dsh/compaction'
import {
  addUsage,
  BlockAssembler,
  emptyUsage,
  LlmError,
  type LlmRequest,
  type Message,
  type StreamChunk,
  type Usage,
} from '@dsh/llm'
import { pack } from './plan.ts'

export interface SummarizerSetup {
  request: Pick<LlmRequest, 'route' | 'system' | 'tools'>
  maxOutputTokens: number
  /** Estimated tokens the messages of one summary request may take. */
  budget: number
  estimate(message: Message): number
  stream(request: LlmRequest): AsyncIterable<StreamChunk>
  signal: AbortSignal
  instruction: string
  partInstruction: string
  mergeInstruction: string
  partIntro: string
  maxDepth: number
  /** Characters a single over-budget message is shortened to per text block, as a last resort. */
  charsPerToken: number
  /** Every text the summarizer writes into a request (instructions, part intros, part summaries), before it is sent. */
  record(text: string): void
}

export class SummaryError extends Error {
  override name = 'SummaryError'
  constructor(
    readonly code: 'SUMMARY_FAILED' | 'SUMMARY_EMPTY' | 'SUMMARY_TOO_LARGE' | 'ABORTED',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options)
  }
}

type Kind = 'whole' | 'part' | 'merge'

const userText = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] })

/**
 * Writes the summary of a history with as few requests as fit: one request over the session's own prefix
 * when it fits (so a provider's prompt cache hits), else summaries of consecutive parts and then a summary
 * of those summaries, recursively, up to `maxDepth` levels. A request the provider refuses as too long is
 * split the same way.
 */
export class Summarizer {
  requests = 0
  usage: Usage = emptyUsage()

  constructor(private readonly setup: SummarizerSetup) {}

  private focus = ''

  /** The summary of `messages` (the session's own prefix, oldest first). */
  run(messages: Message[], focus?: string): Promise<string> {
    this.focus = focus ? `\n\nFocus especially on: ${focus}` : ''
    return this.summarize(messages, 'whole', 0)
  }

  /** A user message the summarizer writes itself: recorded (logged) first, so the request derives from the log. */
  private say(text: string): Message {
    this.setup.record(text)
    return userText(text)
  }

  /** A whole summary replaces the history; a part is one piece of it; a merge joins part summaries. */
  private instruction(kind: Kind): string {
    if (kind === 'part') return this.setup.partInstruction
    return (kind === 'whole' ? this.setup.instruction : this.setup.mergeInstruction) + this.focus
  }

  private size(messages: readonly Message[]): number {
    let total = 0
    for (const message of messages) total += this.setup.estimate(message)
    return total
  }

  private async summarize(messages: Message[], kind: Kind, depth: number): Promise<string> {
    const { budget } = this.setup
    if (this.size(messages) <= budget) {
      try {
        return await this.ask(messages, this.instruction(kind))
      } catch (error) {
        if (!(error instanceof LlmError && error.code === 'CONTEXT_WINDOW_EXCEEDED')) throw error
        // The estimate was wrong: split what the provider refused.
        return this.inParts(messages, kind, depth, Math.max(1, Math.floor(this.size(messages) / 2)))
      }
    }
    return this.inParts(messages, kind, depth, budget)
  }

  private async inParts(messages: Message[], kind: Kind, depth: number, budget: number): Promise<string> {
    if (depth >= this.setup.maxDepth)
      throw new SummaryError(
        'SUMMARY_TOO_LARGE',
        `the history is still too large for one summary request after ${depth} levels of splitting`,
      )
    let chunks = pack(messages, budget, this.setup.estimate)
    if (chunks.length === 1) {
      // One unit alone is over the budget: shorten its texts (head and tail kept) until it fits.
      chunks = [this.shorten(chunks[0]!, budget)]
      if (this.size(chunks[0]!) > this.setup.budget)
        throw new SummaryError('SUMMARY_TOO_LARGE', 'one message is too large to summarize even shortened')
      return this.summarize(chunks[0]!, kind, depth + 1)
    }
    const parts: string[] = []
    for (const [index, chunk] of chunks.entries()) {
      // The first part is the session's own prefix (cached); later ones say where they come from.
      const input =
        index === 0
          ? chunk
          : [
              this.say(
                this.setup.partIntro.replace('{part}', String(index + 1)).replace('{parts}', String(chunks.length)),
              ),
              ...chunk,
            ]
      parts.push(await this.summarize(input, 'part', depth + 1))
    }
    const merged = parts.map((part, index) => this.say(`Summary of part ${index + 1} of ${parts.length}:\n\n${part}`))
    return this.summarize(merged, kind === 'part' ? 'part' : 'merge', depth + 1)
  }

  private shorten(messages: Message[], budget: number): Message[] {
    const share = Math.max(1, Math.floor((budget * this.setup.charsPerToken) / Math.max(1, messages.length)))
    return messages.map((message) => shortenMessage(message, share))
  }

  private async ask(messages: Message[], instruction: string): Promise<string> {
    const { request, signal } = this.setup
    if (signal.aborted) throw new SummaryError('ABORTED', 'the compaction was cancelled')
    const assembler = new BlockAssembler(request.route.provider)
    const sent: LlmRequest = {
      route: request.route,
      system: request.system,
      // The tools stay (the provider's cache over the prefix hits) but may not be called: a summary is text.
      tools: request.tools,
      toolChoice: 'none',
      messages: [...messages, this.say(instruction)],
      maxOutputTokens: this.setup.maxOutputTokens,
      signal,
    }
    this.requests++
    try {
      for await (const chunk of this.setup.stream(sent)) {
        assembler.push(chunk)
        if (assembler.isFinished) break
      }
    } catch (error) {
      if (error instanceof LlmError) throw error
      throw new SummaryError(
        signal.aborted ? 'ABORTED' : 'SUMMARY_FAILED',
        `the summary request failed: ${error instanceof Error ? error.message : error}`,
        { cause: error },
      )
    }
    const answer = assembler.result()
    this.usage = addUsage(this.usage, answer.usage)
    if (answer.error) {
      if (answer.error.code === 'CONTEXT_WINDOW_EXCEEDED') throw LlmError.from(answer.error)
      throw new SummaryError(
        'SUMMARY_FAILED',
        `the summary request failed: ${answer.error.code}: ${answer.error.message}`,
      )
    }
    if (signal.aborted || answer.finish === 'aborted') throw new SummaryError('ABORTED', 'the compaction was cancelled')
    const text = answer.content
      .flatMap((block) => (block.type === 'text' ? [block.text] : []))
      .join('')
      .trim()
    if (!text) {
      // A provider that ignores `toolChoice: 'none'` may still answer with calls.
      const calls = answer.content.some((block) => block.type === 'tool-call')
      throw new SummaryError(
        'SUMMARY_EMPTY',
        calls
          ? 'the model answered the summary request with tool calls instead of a summary'
          : 'the model returned an empty summary',
      )
    }
    return text
  }
}
