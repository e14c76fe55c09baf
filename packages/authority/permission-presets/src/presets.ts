import type { ApprovalPolicy } from '@dsh/approval'
import type { SandboxMode } from '@dsh/sandbox'

export interface Preset {
  mode: SandboxMode
  approval: ApprovalPolicy
  /** One line for people choosing a preset. */
  description: string
}

/**
 * The presets of docs/security.md. They are definitions, not tunables: each is named for its sandbox mode, and all
 * of them ask before anything needs more than the mode allows.
 */
export const PERMISSION_PRESETS = {
  'read-only': {
    mode: 'read-only',
    approval: 'ask',
    description: 'Read anything; write nothing (files or commands); ask before anything more.',
  },
  'workspace-write': {
    mode: 'workspace-write',
    approval: 'ask',
    description: 'Write inside the workspace only; ask before anything more.',
  },
  'danger-full-access': {
    mode: 'danger-full-access',
    approval: 'ask',
    description: 'No confinement: files and commands may change anything the user can.',
  },
} as const satisfies Record<string, Preset>

export type PresetName = keyof typeof PERMISSION_PRESETS
export const PRESET_NAMES = Object.keys(PERMISSION_PRESETS) as PresetName[]
