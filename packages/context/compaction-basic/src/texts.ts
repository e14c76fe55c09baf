// Default wording of the summary requests and of the summary message (each is a Config field).

export const INSTRUCTION = `Stop the task for a moment and write a summary of the conversation so far. It will replace the conversation: work continues from your summary and the most recent messages only. Do not call any tools; answer with the summary as plain text. Include the user's requests and instructions (quote exact requirements and constraints); what was done, with the files, commands, names and results that matter; errors met and how they were resolved; decisions and their reasons; the current state of the work; and what remains to be done next. Be concise, but keep every specific detail needed to continue without asking again.`

export const PART_INSTRUCTION = `Stop here and summarize the part of an earlier conversation shown above; the summaries of all parts will be merged into one. Do not call any tools; answer with plain text. Keep the user's requests and exact requirements, what was done (files, commands, names, results), errors and how they were resolved, decisions, and open tasks.`

export const MERGE_INSTRUCTION = `The messages above are summaries of consecutive parts of one earlier conversation, oldest first. Merge them into one summary that will replace the whole conversation: work continues from it and the most recent messages only. Do not call any tools; answer with plain text. Keep the user's requests and exact requirements, what was done (files, commands, names, results), errors and how they were resolved, decisions, the current state and what remains to be done; where parts disagree, the later part is current.`

export const PART_INTRO = `Part {part} of {parts} of an earlier conversation follows (the other parts are summarized separately).`

export const SUMMARY_INTRO = `The earlier part of this conversation was compacted to save context. Summary of it:`
