// Context pressure (docs/architecture.md, "Context").
export { TokenMeter, TokenMeter as default, type Config, type Pressure, type RequestHeader } from './meter.ts'
export { estimateHeader, estimateMessage, estimateText, type EstimateOptions } from './estimate.ts'
