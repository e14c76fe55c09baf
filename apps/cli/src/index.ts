export { run } from './launcher.ts'
export { parseLauncherArgs, type LauncherArgs } from './args.ts'
