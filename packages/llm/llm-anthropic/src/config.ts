import Schema from '@dsh/schemastery'
import { EFFORTS, type ModelInfo } from '@dsh/llm'

export interface Config {
  provider: string
  baseUrl: string
  apiKeyName: string
  models: ModelInfo[]
  unknownModel: Omit<ModelInfo, 'id'>
  maxOutputTokens: number
  promptCache: boolean
  idleTimeoutMs: number
  errorBodyChars: number
}

const capabilities = {
  contextWindow: Schema.natural().min(1).description('Tokens the model reads at most (prompt + output).'),
  maxOutputTokens: Schema.natural().min(1).description('Output tokens asked for at most (`max_tokens`).'),
  images: Schema.boolean().default(true).description('Whether the model reads images.'),
  reasoning: Schema.boolean().default(true).description('Whether the model can think before answering.'),
  efforts: Schema.array(Schema.union(EFFORTS)).description(
    'Reasoning efforts a route may ask for (off: thinking disabled; others: adaptive thinking at that effort).',
  ),
}

const modelSchema = Schema.object({
  id: Schema.string().required().description('Model id as the API names it.'),
  ...capabilities,
  contextWindow: capabilities.contextWindow.required(),
}) as Schema<ModelInfo>

export const Config: Schema<Config> = Schema.object({
  provider: Schema.string().default('anthropic').description('Provider name routes use to reach this adapter.'),
  baseUrl: Schema.string()
    .default('')
    .description(
      'API base URL; empty: $ANTHROPIC_BASE_URL, else https://api.anthropic.com. Never read from .env or the credentials file.',
    ),
  apiKeyName: Schema.string()
    .default('ANTHROPIC_API_KEY')
    .description('Credential holding the API key, resolved on every request.'),
  models: Schema.array(modelSchema)
    .default([
      {
        id: 'claude-opus-4-6',
        contextWindow: 200_000,
        maxOutputTokens: 128_000,
        images: true,
        reasoning: true,
        efforts: ['off', 'low', 'high', 'max'],
      },
      {
        id: 'claude-sonnet-4-6',
        contextWindow: 200_000,
        maxOutputTokens: 64_000,
        images: true,
        reasoning: true,
        efforts: ['off', 'low', 'high'],
      },
      {
        id: 'claude-haiku-4-5',
        contextWindow: 200_000,
        maxOutputTokens: 64_000,
        images: true,
        reasoning: true,
        efforts: ['off'],
      },
    ])
    .description('The catalog: models and what they can do.'),
  unknownModel: (Schema.object(capabilities) as Schema<Omit<ModelInfo, 'id'>>)
    .default({ contextWindow: 200_000, images: true, reasoning: true, efforts: ['off', 'low', 'high'] })
    .description('Capabilities assumed for a model the catalog does not list.'),
  maxOutputTokens: Schema.natural()
    .min(1)
    .default(32_000)
    .description('`max_tokens` when neither the request nor the model names one (the API requires it).'),
  promptCache: Schema.boolean()
    .default(true)
    .description(
      'Ask the API to cache the request prefix (top-level `cache_control`), so later steps read it at the cache price.',
    ),
  idleTimeoutMs: Schema.natural()
    .min(1)
    .default(180_000)
    .description('A stream that sends nothing for this long (headers included) fails with TIMEOUT.'),
  errorBodyChars: Schema.natural()
    .min(1)
    .default(2_000)
    .description('Characters of a provider error message quoted in the error.'),
})
