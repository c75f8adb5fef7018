import { describe, expect, test } from "bun:test";
import { constants, generateKeyPairSync, privateDecrypt } from "node:crypto";
import { checkAuthToken, credentialHash, decodeAuthToken, encodeAuthToken, isAuthorizedUser, unpadPkcs1, type ServerAuth } from "./auth.ts";

const { publicKey, privateKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  publicKeyEncoding: { type: "spki", format: "pem" },
  privateKeyEncoding: { type: "pkcs8", format: "pem" },
});
// `printf '{mario}rossi' | sha256sum`, the line iperf3's docs have users write.
const MARIO = "bf7a49a846d44b454a5d11e7acfaf13d138bbe0b7483aa3e050879700572709b";
const USERS = `# user,sha256\r\nluigi,${"0".repeat(64)}\r\nno comma here\nmario,${MARIO}\n`;

describe("iperf3 authentication token", () => {
  test("the hash of {user}password matches sha256sum's", () => {
    expect(credentialHash("mario", "rossi")).toBe(MARIO);
  });

  for (const padding of ["oaep", "pkcs1"] as const) {
    test(`${padding}: the token decrypts to the stock text layout and back to the credentials`, () => {
      const token = encodeAuthToken({ username: "mario", password: "rossi", tsS: 1764877200.7 }, publicKey, padding);
      expect(token).toMatch(/^[A-Za-z0-9+/]+=*$/);
      expect(Buffer.from(token, "base64").length).toBe(256);
      const sealed = Buffer.from(token, "base64");
      const raw = padding === "oaep" ? privateDecrypt({ key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING }, sealed) : unpadPkcs1(privateDecrypt({ key: privateKey, padding: constants.RSA_NO_PADDING }, sealed))!;
      expect(new TextDecoder().decode(raw)).toBe("user: mario\npwd:  rossi\nts:   1764877200");
      expect(decodeAuthToken(token, privateKey, padding)).toEqual({ username: "mario", password: "rossi", tsS: 1764877200 });
    });
  }

  test("a token made with the other padding, or not base64 RSA at all, does not decode", () => {
    const oaep = encodeAuthToken({ username: "mario", password: "rossi", tsS: 1 }, publicKey, "oaep");
    expect(decodeAuthToken(oaep, privateKey, "pkcs1")).toBeUndefined();
    expect(decodeAuthToken("bm90IGEgdG9rZW4=", privateKey, "oaep")).toBeUndefined();
  });

  test("PKCS#1 v1.5 unpadding: type 2 with 8 or more padding bytes only", () => {
    const block = (pad: number, type = 2) => new Uint8Array([0, type, ...Array(pad).fill(0xaa), 0, 0x68, 0x69]);
    expect([...unpadPkcs1(block(8))!]).toEqual([0x68, 0x69]);
    expect(unpadPkcs1(block(7))).toBeUndefined();
    expect(unpadPkcs1(block(8, 1))).toBeUndefined();
    expect(unpadPkcs1(new Uint8Array([0, 2, ...Array(20).fill(1)]))).toBeUndefined();
  });

  test("the users file: comments, lines without a comma and CRLF endings are read as the stock server reads them", () => {
    expect(isAuthorizedUser(USERS, "mario", "rossi")).toBe(true);
    expect(isAuthorizedUser(USERS, "mario", "bianchi")).toBe(false);
    expect(isAuthorizedUser(USERS, "# user", "x")).toBe(false);
  });

  test("the server's verdict: admitted, wrong password, unknown user, clock skew, no token, wrong padding", () => {
    const auth: ServerAuth = { privateKeyPem: privateKey, padding: "oaep", skewS: 10 };
    const token = (user: string, pwd: string, tsS: number) => encodeAuthToken({ username: user, password: pwd, tsS }, publicKey, "oaep");
    const now = 1_764_877_200;
    expect(checkAuthToken(token("mario", "rossi", now - 10), auth, USERS, now)).toEqual({ ok: true, username: "mario" });
    expect(checkAuthToken(token("mario", "rossi", now + 10), auth, USERS, now).ok).toBe(true);
    expect(checkAuthToken(token("mario", "bianchi", now), auth, USERS, now)).toMatchObject({ ok: false, reason: expect.stringContaining("mario") });
    expect(checkAuthToken(token("peach", "rossi", now), auth, USERS, now).ok).toBe(false);
    expect(checkAuthToken(token("mario", "rossi", now - 11), auth, USERS, now)).toMatchObject({ ok: false, reason: expect.stringContaining("11 s off") });
    expect(checkAuthToken(undefined, auth, USERS, now)).toMatchObject({ ok: false, reason: "the client sent no credentials" });
    expect(checkAuthToken(token("mario", "rossi", now), { ...auth, padding: "pkcs1" }, USERS, now)).toMatchObject({ ok: false, reason: expect.stringContaining("PKCS#1") });
  });
});
