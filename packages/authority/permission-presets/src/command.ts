import type { CommandDefinition } from '@dsh/commands'
import { PRESET_NAMES, type PresetName } from './presets.ts'
import type { PermissionPresets } from './service.ts'

const failure = (code: string, message: string) => Object.assign(new Error(message), { code })

/**
 * `/preset [name]`: the session's permission preset, or a switch to another one. Commands run only from
 * what a person sends through a surface, so the switch is logged with the actor `user:slash-command`; a
 * child agent's ceiling still bounds the mode it gets.
 */
export function presetCommand(presets: PermissionPresets): CommandDefinition {
  return {
    name: 'preset',
    description: 'Show the permission preset (sandbox mode and approvals), or switch this session to another.',
    argumentHint: `[${PRESET_NAMES.join('|')}]`,
    run(args, { agent }) {
      const wanted = args.trim()
      if (!wanted) {
        const state = presets.current(agent.session)
        return `Permission: ${state.preset ?? 'custom'} (sandbox ${state.mode}, approvals ${state.approval}). Presets: ${PRESET_NAMES.join(', ')}.`
      }
      if (!(PRESET_NAMES as readonly string[]).includes(wanted))
        throw failure('COMMAND_BAD_ARGS', `unknown preset "${wanted}" (known: ${PRESET_NAMES.join(', ')})`)
      const state = presets.set(agent.session, wanted as PresetName, 'user:slash-command')
      return `Permission: ${wanted} (sandbox ${state.mode}, approvals ${state.approval}) from the next step on.`
    },
  }
}
