/**
 * Reads all of `stream` as text, or resolves undefined at once when it is a terminal (a person would have
 * to type the task: they give it as an argument instead). Rejects when `signal` aborts, leaving the stream
 * paused so it no longer holds the process.
 */
export function readAll(
  stream: NodeJS.ReadableStream & { isTTY?: boolean },
  signal: AbortSignal,
): Promise<string | undefined> {
  if (stream.isTTY) return Promise.resolve(undefined)
  return new Promise((resolve, reject) => {
    let text = ''
    const onData = (chunk: string) => void (text += chunk)
    const done = () => {
      stream.off('data', onData).off('end', onEnd).off('error', onError)
      signal.removeEventListener('abort', onAbort)
      stream.pause()
    }
    const onEnd = () => (done(), resolve(text))
    const onError = (error: Error) => (done(), reject(error))
    const onAbort = () => (done(), reject(signal.reason ?? new Error('aborted')))
    if (signal.aborted) return onAbort()
    stream.setEncoding('utf8')
    stream.on('data', onData).on('end', onEnd).on('error', onError)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/** Asks `question` on the terminal (`output`, the launch's stderr) and reads one line of `input`: true for `y` or `yes`, in any case. */
export async function askYesNo(
  question: string,
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
): Promise<boolean> {
  const { createInterface } = await import('node:readline/promises')
  const line = createInterface({ input, output })
  try {
    return /^\s*y(es)?\s*$/i.test(await line.question(question))
  } finally {
    line.close()
  }
}
