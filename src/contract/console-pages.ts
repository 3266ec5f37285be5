/** The ten console pages computer use may picture (contract §12's nine and the mesh page). */
export const CONSOLE_PAGES = ['dashboard', 'agents', 'mesh', 'trust', 'federation', 'routing', 'audit', 'alerts', 'diagnostics', 'settings'] as const;
export type ConsolePage = (typeof CONSOLE_PAGES)[number];
