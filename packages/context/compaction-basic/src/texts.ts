// Default wording of the summary requests and of the summary message (each is a Config field).

// The headings are parsed back into sections (src/sections.ts, SECTION_TITLES): keep them in step.
const SECTIONS = `Write exactly these sections, each under its own "## " heading:
## Goal and constraints
The user's goal and every requirement and constraint they stated (quote exact wording that matters).
## Decisions
Decisions made and their reasons.
## Done
What was done, with the files, commands, names and results that matter; errors met and how they were resolved.
## Next
What remains to be done, in order, starting with the step in progress.
## Open questions
What is unknown or waits for the user (write "none" if nothing).`

export const INSTRUCTION = `Stop the task for a moment and write a summary of the conversation so far. It will replace the conversation: work continues from your summary and the most recent messages only. Do not call any tools; answer with the summary as plain text. ${SECTIONS}
Be concise, but keep every specific detail needed to continue without asking again.`

export const PART_INSTRUCTION = `Stop here and summarize the part of an earlier conversation shown above; the summaries of all parts will be merged into one. Do not call any tools; answer with plain text. Keep the user's requests and exact requirements, what was done (files, commands, names, results), errors and how they were resolved, decisions, and open tasks.`

export const MERGE_INSTRUCTION = `The messages above are summaries of consecutive parts of one earlier conversation, oldest first. Merge them into one summary that will replace the whole conversation: work continues from it and the most recent messages only. Do not call any tools; answer with plain text. Where parts disagree, the later part is current. ${SECTIONS}`

export const PART_INTRO = `Part {part} of {parts} of an earlier conversation follows (the other parts are summarized separately).`

export const SUMMARY_INTRO = `The earlier part of this conversation was compacted to save context. Summary of it:`
