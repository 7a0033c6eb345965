/**
 * A runtime a session can be started with, as the dashboard's start form lists it. Plain types, no imports: the page
 * (web/src) reads them through src/dashboard/dashboard-settings.ts.
 */
export interface SessionRuntimeOption {
  name: string;
  /** Takes a command and its arguments (the command runtime). */
  takes_command: boolean;
  /** Whether its executable is on the service's PATH now; `auto` and command runtimes are always. */
  installed: boolean;
}
