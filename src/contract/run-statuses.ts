/** The states of a computer-use run (contract §12): queued, running, then one of the four ends. */
export const RUN_STATUSES = ['queued', 'running', 'completed', 'failed', 'canceled', 'max_turns_reached'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
