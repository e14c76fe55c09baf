import Schema from '@dsh/schemastery'
import { EFFORTS, type ModelInfo } from '@dsh/llm'

export interface Config {
  provider: string
  baseUrl: string
  apiKeyName: string
  requireKey: boolean
  models: ModelInfo[]
  unknownModel: Omit<ModelInfo, 'id'>
  discoverModels: 'auto' | 'always' | 'never'
  modelsCacheMs: number
  idleTimeoutMs: number
  errorBodyChars: number
}

const capabilities = {
  contextWindow: Schema.natural().min(1).description('Tokens the model reads at most (prompt + output).'),
  maxOutputTokens: Schema.natural()
    .min(1)
    .description('Output tokens asked for at most (`max_completion_tokens`); omitted, the server default applies.'),
  images: Schema.boolean().default(false).description('Whether the model reads images.'),
  reasoning: Schema.boolean().default(false).description('Whether the model thinks before answering.'),
  efforts: Schema.array(Schema.union(EFFORTS)).description(
    'Reasoning efforts a route may ask for (sent as `reasoning_effort`; off → none).',
  ),
}

const modelSchema = Schema.object({
  id: Schema.string().required().description('Model id as the server names it.'),
  ...capabilities,
  contextWindow: capabilities.contextWindow.required(),
}) as Schema<ModelInfo>

export const Config: Schema<Config> = Schema.object({
  provider: Schema.string()
    .default('openai')
    .description(
      'Provider name routes use to reach this adapter (mount the plugin twice under two names for two servers).',
    ),
  baseUrl: Schema.string()
    .default('')
    .description(
      'API base URL including /v1 (Ollama: http://127.0.0.1:11434/v1); empty: $OPENAI_BASE_URL, else https://api.openai.com/v1. Never read from .env or the credentials file.',
    ),
  apiKeyName: Schema.string()
    .default('OPENAI_API_KEY')
    .description('Credential holding the API key, resolved on every request.'),
  requireKey: Schema.boolean()
    .default(true)
    .description(
      'false for local servers that need no key: no authorization header is sent when the credential is unset.',
    ),
  models: Schema.array(modelSchema)
    .default([])
    .description('The catalog: models and what they can do (discovered models not listed here get `unknownModel`).'),
  unknownModel: (Schema.object(capabilities) as Schema<Omit<ModelInfo, 'id'>>)
    .default({ contextWindow: 128_000, images: false, reasoning: false })
    .description('Capabilities assumed for a model the catalog does not list.'),
  discoverModels: Schema.union(['auto', 'always', 'never'] as const)
    .default('auto')
    .description(
      "Whether models() also lists what GET {baseUrl}/models reports (a local server lists what it has pulled). auto: for every server but OpenAI's own API, whose list is mostly models that do not chat.",
    ),
  modelsCacheMs: Schema.natural().default(300_000).description('How long a discovered model list is reused.'),
  idleTimeoutMs: Schema.natural()
    .min(1)
    .default(180_000)
    .description('A stream that sends nothing for this long (headers included) fails with TIMEOUT.'),
  errorBodyChars: Schema.natural()
    .min(1)
    .default(2_000)
    .description('Characters of a provider error message quoted in the error.'),
})
