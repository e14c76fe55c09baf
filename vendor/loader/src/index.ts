// The one door to @cordisjs/plugin-loader, plus the host that makes it usable by an app (vendor/README.md).
export * from '@cordisjs/plugin-loader'
export { default } from '@cordisjs/plugin-loader'
export {
  mountLoader,
  deferJs,
  toEntryOptions,
  containsDeferred,
  DEFERRED_JS,
  type HostRow,
  type LoaderHost,
  type LoaderHostOptions,
  type PluginResolver,
} from './host.ts'
