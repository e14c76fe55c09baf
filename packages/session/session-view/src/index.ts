export type {
  ApprovalInfo,
  ApprovalItem,
  AssistantItem,
  Block,
  ChangeState,
  ErrorInfo,
  FileSnapshot,
  FileTouch,
  ImageRef,
  Item,
  LogEvent,
  NoticeCause,
  NoticeItem,
  RetryInfo,
  TodoEntry,
  ToolItem,
  PrintedOutput,
  TurnEndItem,
  SubagentItem,
  UserItem,
  Usage,
  ViewChange,
} from './items.ts'
export { pathOf, proposedChange, type ProposedChange, type Replacement } from './change.ts'
export { retryInfoOf, retryText, retryWords, waitText, type RetryWords } from './retry.ts'
export { SessionView } from './view.ts'
export { commandEnding } from './ending.ts'
