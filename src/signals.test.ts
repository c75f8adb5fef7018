import { expect, test } from "bun:test";
import { Interrupted, interruptedExitCode, unlessAborted } from "./signals.ts";

const deferred = <T>() => {
  let resolve!: (v: T) => void;
  const p = new Promise<T>((r) => (resolve = r));
  return { p, resolve };
};

test("unlessAborted: the value when it comes first", async () => {
  const d = deferred<string>();
  const late: string[] = [];
  const r = unlessAborted(d.p, new AbortController().signal, (v) => late.push(v));
  d.resolve("socket");
  expect(await r).toBe("socket");
  expect(late).toEqual([]);
});

test("unlessAborted: a signal rejects at once with Interrupted, and a value that comes later is handed to late", async () => {
  const d = deferred<string>();
  const c = new AbortController();
  const late: string[] = [];
  const r = unlessAborted(d.p, c.signal, (v) => late.push(v));
  c.abort("SIGINT");
  await expect(r).rejects.toBeInstanceOf(Interrupted);
  d.resolve("socket");
  await d.p;
  await Promise.resolve();
  expect(late).toEqual(["socket"]);
});

test("unlessAborted: already aborted rejects at once; a failure of the promise itself passes through", async () => {
  const c = new AbortController();
  c.abort("SIGTERM");
  await expect(unlessAborted(Promise.resolve(1), c.signal, () => {})).rejects.toBeInstanceOf(Interrupted);
  const err = new Error("ECONNREFUSED");
  await expect(unlessAborted(Promise.reject(err), new AbortController().signal, () => {})).rejects.toBe(err);
});

test("exit codes after a signal: 128 + its number", () => {
  const aborted = (reason: string) => {
    const c = new AbortController();
    c.abort(reason);
    return c.signal;
  };
  expect(interruptedExitCode(new AbortController().signal)).toBeUndefined();
  expect(interruptedExitCode(aborted("SIGINT"))).toBe(130);
  expect(interruptedExitCode(aborted("SIGTERM"))).toBe(143);
  expect(interruptedExitCode(aborted("SIGALRM"))).toBe(142);
});
