import Schema from '@dsh/schemastery'
import { EFFORTS, type ModelInfo } from '@dsh/llm'

export interface Config {
  provider: string
  baseUrl: string
  apiKeyName: string
  models: ModelInfo[]
  unknownModel: Omit<ModelInfo, 'id'>
  idleTimeoutMs: number
  errorBodyChars: number
}

/** What DeepSeek documents for its V4 models: 1M-token windows, thinking with three effort levels. */
const V4 = { contextWindow: 1_000_000, maxOutputTokens: 384_000, images: false, reasoning: true, efforts: [...EFFORTS] }

const capabilities = {
  contextWindow: Schema.natural().min(1).description('Tokens the model reads at most (prompt + output).'),
  maxOutputTokens: Schema.natural()
    .min(1)
    .description('Output tokens asked for at most (`max_tokens`); omitted, the API default applies.'),
  images: Schema.boolean().default(false).description('Whether the model reads images.'),
  reasoning: Schema.boolean().default(true).description('Whether the model thinks before answering.'),
  efforts: Schema.array(Schema.union(EFFORTS)).description('Reasoning efforts a route may ask for.'),
}

const modelSchema = Schema.object({
  id: Schema.string().required().description('Model id as the API names it.'),
  ...capabilities,
  contextWindow: capabilities.contextWindow.required(),
}) as Schema<ModelInfo>

export const Config: Schema<Config> = Schema.object({
  provider: Schema.string().default('deepseek').description('Provider name routes use to reach this adapter.'),
  baseUrl: Schema.string()
    .default('')
    .description(
      'API base URL; empty: $DEEPSEEK_BASE_URL, else https://api.deepseek.com. Never read from .env or the credentials file, so a repository cannot redirect your key.',
    ),
  apiKeyName: Schema.string()
    .default('DEEPSEEK_API_KEY')
    .description(
      'Credential holding the API key (environment, then $DSH_HOME/.credentials.yaml, then .env), resolved on every request.',
    ),
  models: Schema.array(modelSchema)
    .default([
      { id: 'deepseek-v4-flash', ...V4 },
      { id: 'deepseek-v4-pro', ...V4 },
    ])
    .description('The catalog: models and what they can do.'),
  unknownModel: (Schema.object(capabilities) as Schema<Omit<ModelInfo, 'id'>>)
    .default({ contextWindow: 128_000, images: false, reasoning: true, efforts: [...EFFORTS] })
    .description('Capabilities assumed for a model the catalog does not list.'),
  idleTimeoutMs: Schema.natural()
    .min(1)
    .default(180_000)
    .description('A stream that sends nothing for this long (headers included) fails with TIMEOUT.'),
  errorBodyChars: Schema.natural()
    .min(1)
    .default(2_000)
    .description('Characters of a provider error body quoted in the error message.'),
})
