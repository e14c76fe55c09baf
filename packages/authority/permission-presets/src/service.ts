import { APPROVAL_POLICIES, type ApprovalPolicy } from '@dsh/approval'
import { assertActor, AUTHORITY_ACTORS, type AuthorityActor } from '@dsh/authority-rules'
import { type Context, Service } from '@dsh/cordis'
import { SANDBOX_MODES, type SandboxMode } from '@dsh/sandbox'
import type {} from '@dsh/sandbox-policy'
import Schema from '@dsh/schemastery'
import { checkShape, oneOf, Type, type Session, type Static } from '@dsh/session'
import type {} from '@dsh/commands'
import { presetCommand } from './command.ts'
import { PERMISSION_PRESETS, PRESET_NAMES, type Preset, type PresetName } from './presets.ts'

/** A preset was chosen; the `sandbox/mode` and `approval/policy` it implies follow it in the log. Its type and its check (issue #28.6). */
const PresetFields = {
  preset: oneOf(PRESET_NAMES),
  mode: oneOf(SANDBOX_MODES),
  approval: oneOf(APPROVAL_POLICIES),
  actor: oneOf(AUTHORITY_ACTORS),
}
const PermissionPresetData = Type.Object(PresetFields)
/** Who chose it is absent only in logs written before actors were recorded (the audit shows `unknown`). */
const StoredPermissionPresetData = Type.Object({ ...PresetFields, actor: Type.Optional(PresetFields.actor) })

declare module '@dsh/session' {
  interface SessionEventMap {
    'permission/preset': Static<typeof PermissionPresetData>
  }
}

declare module '@dsh/cordis' {
  interface Context {
    permissionPresets: PermissionPresets
  }
}

export interface Config {
  default: PresetName
}

/** What is in force for a session, and which preset (if any) it amounts to. */
export interface PresetState {
  /** The preset whose mode and policy are both in force; undefined when they were changed apart from any preset. */
  preset: PresetName | undefined
  mode: SandboxMode
  approval: ApprovalPolicy
}

/** A preset that does not exist. */
export class PresetError extends Error {
  override name = 'PresetError'
  readonly code = 'UNKNOWN_PRESET'
}

const isPreset = (name: unknown): name is PresetName => PRESET_NAMES.includes(name as PresetName)

/**
 * Permission presets (docs/security.md). Owns: the presets, the `permission/preset` kind, switching (one logged
 * choice followed by the mode and policy it implies), the default preset's mode for sessions that chose
 * none. Must not own: the mode or the policy themselves (ctx.sandboxPolicy and ctx.approval derive them from
 * the log, so a resumed session is under what it last chose).
 */
export class PermissionPresets extends Service {
  static inject = ['sessions', 'sandboxPolicy', 'approval']
  static Config: Schema<Partial<Config>, Config> = Schema.object({
    default: Schema.union(PRESET_NAMES)
      .default('workspace-write')
      .description(
        "Preset of sessions that chose none: its sandbox mode applies (the approval policy default stays the approval row's).",
      ),
  })

  constructor(
    ctx: Context,
    public config: Config,
  ) {
    super(ctx, 'permissionPresets')
    ctx.sessions.defineKind(ctx, 'permission/preset', {
      schema: PermissionPresetData,
      validateStored: (data) => checkShape(StoredPermissionPresetData, data, 'data'),
    })
    ctx.sandboxPolicy.useDefault(ctx, () => PERMISSION_PRESETS[this.config.default].mode)
    // `/preset` where a commands registry is mounted: the person typing it is the actor.
    ctx.inject(['commands'], (inner) => inner.commands.register(inner, presetCommand(this)))
  }

  list(): (Preset & { name: PresetName })[] {
    return PRESET_NAMES.map((name) => ({ name, ...PERMISSION_PRESETS[name] }))
  }

  get(name: string): Preset {
    if (!isPreset(name))
      throw new PresetError(`unknown permission preset "${name}" (known: ${PRESET_NAMES.join(', ')})`)
    return PERMISSION_PRESETS[name]
  }

  /** The mode and policy in force (from the log) and the preset they amount to. */
  current(session: Session): PresetState {
    const mode = this.ctx.sandboxPolicy.mode(session)
    const approval = this.ctx.approval.policy(session)
    const chosen = session.last('permission/preset')?.data.preset ?? this.config.default
    const matches = (name: PresetName) =>
      PERMISSION_PRESETS[name].mode === mode && PERMISSION_PRESETS[name].approval === approval
    return { preset: matches(chosen) ? chosen : PRESET_NAMES.find(matches), mode, approval }
  }

  /**
   * Switches a session to a preset on behalf of `actor` (required, so no caller can leave the change
   * unattributed): `permission/preset`, then the `sandbox/mode` and `approval/policy` it implies, each
   * naming the same actor.
   */
  set(session: Session, name: string, actor: AuthorityActor): PresetState {
    const preset = this.get(name)
    assertActor(actor, 'permissionPresets.set')
    session.append('permission/preset', {
      preset: name as PresetName,
      mode: preset.mode,
      approval: preset.approval,
      actor,
    })
    this.ctx.sandboxPolicy.setMode(session, preset.mode, actor)
    this.ctx.approval.setPolicy(session, preset.approval, actor)
    return this.current(session)
  }
}
