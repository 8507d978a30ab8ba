import * as argon2 from "@node-rs/argon2";

// Algorithm.Argon2id: a const enum, which isolatedModules cannot read from the typings.
const ARGON2ID = 2;

export interface PasswordParams {
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(hashed: string, password: string): Promise<boolean>;
  /** True when the stored hash was made with other parameters: rehash it after a successful login. */
  needsRehash(hashed: string): boolean;
  /** Spends the same time as a real verification, for unknown accounts (no timing oracle). */
  verifyDummy(password: string): Promise<void>;
}

/**
 * The argon2 primitives a hasher is built on: every hash and every verification (the dummy one
 * too) goes through them, so a test can count the work a sign-in does (@node-rs/argon2 by default).
 */
export interface Argon2Engine {
  hash(password: string, options: argon2.Options): Promise<string>;
  verify(hashed: string, password: string): Promise<boolean>;
}

/** argon2id through a native addon: hashing runs on libuv's thread pool, off the event loop. */
export function createPasswordHasher(params: PasswordParams, engine: Argon2Engine = argon2): PasswordHasher {
  const { hash, verify } = engine;
  const options = { algorithm: ARGON2ID, ...params };
  const paramString = `m=${params.memoryCost},t=${params.timeCost},p=${params.parallelism}`;
  let dummy: Promise<string> | undefined;

  return {
    hash: (password) => hash(password, options),
    async verify(hashed, password) {
      try {
        return await verify(hashed, password);
      } catch {
        return false;
      }
    },
    needsRehash: (hashed) => !hashed.startsWith("$argon2id$") || !hashed.includes(`$${paramString}$`),
    async verifyDummy(password) {
      dummy ??= hash("keyward-dummy-password", options);
      await verify(await dummy, password).catch(() => false);
    },
  };
}
