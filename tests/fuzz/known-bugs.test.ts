/**
 * Minimal inputs for the bugs the fuzz targets found (described in known-bugs.ts), each marked `test.failing`:
 * CI stays green while the bug is there, and this file goes red the day a fix lands, so the test and the matching
 * KNOWN predicate get deleted together. Each test states the behaviour the module should have.
 */
