/** The nine console pages computer use may picture (contract §12). */
export const CONSOLE_PAGES = ['dashboard', 'agents', 'trust', 'federation', 'routing', 'audit', 'alerts', 'diagnostics', 'settings'] as const;
export type ConsolePage = (typeof CONSOLE_PAGES)[number];
