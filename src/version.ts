export const VERSION = "0.1.0";

declare const ANYPERF_REVISION: string | undefined;

/** The git commit the binary was built from (scripts/build defines it); "unknown" when run from source. */
export const REVISION: string = typeof ANYPERF_REVISION === "string" ? ANYPERF_REVISION : "unknown";
