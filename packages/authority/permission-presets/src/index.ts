// Permission presets (docs/architecture.md, "Execution world").
export { PERMISSION_PRESETS, PRESET_NAMES, type PresetName, type Preset } from './presets.ts'
export {
  PermissionPresets,
  PermissionPresets as default,
  PresetError,
  type Config,
  type PresetState,
} from './service.ts'
