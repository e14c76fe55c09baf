// The history with the seq (and source) of each message is the session fold's own (`deriveEntries` in
// @dsh/session), so a cut written as a seq range maps back to exactly the messages the model saw.
export { deriveEntries, type HistoryEntry as Entry } from '@dsh/session'
