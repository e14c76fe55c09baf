// Composition and boot (docs/architecture.md, "Composition"). One pure `compose()` shared by boot and dump.
export { compose, walkRows, type ComposedRow, type Composition, type Layer, type Touch } from './compose.ts'
export { CompositionError, type Origin } from './errors.ts'
export { JsExpr } from './js-expr.ts'
export { parsePatch, readPatchFile, type PatchItem, type RowSpec } from './patch-file.ts'
export { defaultHome, gatherLayers, readAppManifest, type AppManifest, type Profile } from './layers.ts'
export { dumpComposition } from './dump.ts'
export {
  bootTree,
  composeProfile,
  BootError,
  type BootedTree,
  type BootOptions,
  type ComposeOptions,
  type RowFailure,
} from './boot.ts'
export {
  findInstalledPlugin,
  installedNames,
  pluginsDirOf,
  readPluginDeclaration,
  type InstalledPlugin,
  type PluginDeclaration,
} from './user-plugins.ts'
