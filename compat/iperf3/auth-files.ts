/**
 * iperf3's authentication options read from disk and the environment: the client's public key and IPERF3_PASSWORD,
 * the server's private key and authorized-users file (checked readable at start; read again for every test, as the
 * stock server does, so edits apply without a restart). The token itself is interop/iperf3/auth.ts's.
 */
import { createPrivateKey, createPublicKey } from "node:crypto";
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { UserError } from "../../src/errors.ts";
import { checkAuthToken, DEFAULT_SKEW_S, encodeAuthToken, type AuthPadding } from "../../interop/iperf3/auth.ts";
import type { ClientPlan, ServerPlan } from "./plan.ts";

type Options = Record<string, string | boolean | undefined>;

const paramError = (text: string, fix: string) => new UserError(`parameter error - ${text}: ${fix}`, 1);
const CLIENT_AUTH = "you must specify a username, password, and path to a valid RSA public key";
const SERVER_AUTH = "you must specify a path to a valid RSA private key and a user credential file";

function readKey(path: string, option: string, check: (pem: string) => unknown, text: string): string {
  try {
    const pem = readFileSync(path, "utf8");
    check(pem);
    return pem;
  } catch (e) {
    throw paramError(text, `${option} ${path}: ${e instanceof Error ? e.message : String(e)} (make it with openssl genrsa / openssl rsa -pubout)`);
  }
}

const padding = (o: Options): AuthPadding => (o["use-pkcs1-padding"] === true ? "pkcs1" : "oaep");

/** --username, --rsa-public-key-path and IPERF3_PASSWORD, all or none. */
export function clientAuth(o: Options, env: Record<string, string | undefined>): ClientPlan["auth"] {
  const username = o.username as string | undefined;
  const keyPath = o["rsa-public-key-path"] as string | undefined;
  if (username === undefined && keyPath === undefined) {
    if (o["use-pkcs1-padding"] === true) throw paramError(CLIENT_AUTH, "--use-pkcs1-padding only applies with --username and --rsa-public-key-path");
    return undefined;
  }
  if (username === undefined || keyPath === undefined) throw paramError(CLIENT_AUTH, "pass both --username and --rsa-public-key-path");
  const password = env.IPERF3_PASSWORD;
  // The stock client prompts on a terminal; anyperf takes the password from the environment only.
  if (password === undefined) throw paramError(CLIENT_AUTH, "set the password in IPERF3_PASSWORD");
  const publicKeyPem = readKey(keyPath, "--rsa-public-key-path", (pem) => createPublicKey(pem), CLIENT_AUTH);
  return { username, password, publicKeyPem, padding: padding(o) };
}

/** The authtoken a client sends, made now (the server checks its time against its own clock). */
export function clientAuthToken(auth: NonNullable<ClientPlan["auth"]>): string {
  return encodeAuthToken({ username: auth.username, password: auth.password, tsS: Date.now() / 1000 }, auth.publicKeyPem, auth.padding);
}

/** --rsa-private-key-path and --authorized-users-path together, with --time-skew-threshold and --use-pkcs1-padding. */
export function serverAuth(o: Options): ServerPlan["auth"] {
  const keyPath = o["rsa-private-key-path"] as string | undefined;
  const usersPath = o["authorized-users-path"] as string | undefined;
  const skew = o["time-skew-threshold"] as string | undefined;
  if (skew !== undefined && !(/^\d+$/.test(skew) && Number(skew) > 0)) throw paramError("skew threshold must be a positive number", "pass --time-skew-threshold SECONDS, 1 or more");
  if (keyPath === undefined && usersPath === undefined) {
    const alone = skew !== undefined ? "--time-skew-threshold" : o["use-pkcs1-padding"] === true ? "--use-pkcs1-padding" : undefined;
    if (alone) throw paramError(SERVER_AUTH, `${alone} only applies with --rsa-private-key-path and --authorized-users-path`);
    return undefined;
  }
  if (keyPath === undefined || usersPath === undefined) throw paramError(SERVER_AUTH, "pass both --rsa-private-key-path and --authorized-users-path");
  try {
    accessSync(usersPath, constants.R_OK);
  } catch {
    throw paramError("cannot access authorized users file", `--authorized-users-path ${usersPath}: make it readable (lines of user,sha256 of {user}password)`);
  }
  const privateKeyPem = readKey(keyPath, "--rsa-private-key-path", (pem) => createPrivateKey(pem), SERVER_AUTH);
  return { privateKeyPem, usersPath, skewS: skew === undefined ? DEFAULT_SKEW_S : Number(skew), padding: padding(o) };
}

/** A users file past this is refused before it is read: 1 MiB holds over ten thousand users. */
export const USERS_FILE_MAX = 1 << 20;

/** The session's authorize callback: why a test's token is refused, or undefined to admit it. */
export function authorizer(auth: NonNullable<ServerPlan["auth"]>): (token: string | undefined) => string | undefined {
  return (token) => {
    let users: string;
    try {
      const size = statSync(auth.usersPath).size;
      if (size > USERS_FILE_MAX) return `${auth.usersPath} is ${size} bytes, over the ${USERS_FILE_MAX}-byte bound for an authorized users file: trim it`;
      users = readFileSync(auth.usersPath, "utf8");
    } catch (e) {
      return `cannot read ${auth.usersPath}: ${e instanceof Error ? e.message : String(e)}`;
    }
    const v = checkAuthToken(token, auth, users, Date.now() / 1000);
    return v.ok ? undefined : v.reason;
  };
}
