/** Log lines a session asks its front end to print, in the Linux tool's levels (INFO, ERR, DBG). */
export interface SessionLog {
  type: "log";
  level: "INFO" | "ERR" | "DBG";
  text: string;
}

export function info(text: string): SessionLog {
  return { type: "log", level: "INFO", text };
}
export function err(text: string): SessionLog {
  return { type: "log", level: "ERR", text };
}
