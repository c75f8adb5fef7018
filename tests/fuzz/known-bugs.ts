/**
 * Bugs the fuzz targets found in modules this suite does not own, reported to their owners. Each predicate
 * recognises exactly that bug's symptom, so a target can go on fuzzing past it; known-bugs.test.ts holds the
 * minimal failing input of each as `test.failing`. When a fix lands, that test starts failing: delete it and the
 * predicate together.
 */
export const KNOWN: Record<string, (argv: readonly string[], output: string) => boolean> = {};
