import { availableParallelism } from "node:os";

/**
 * libuv's thread pool runs the argon2id hashes (and async fs, dns and crypto work). Node sizes it
 * at 4 threads whatever the machine; on 2 cores, four 19 MiB hashes at once crowd the cores and
 * their caches (measured on the 2-core bench machine: about 11 ms of CPU per verification with 2
 * threads, 15-16 ms with 4). Unless UV_THREADPOOL_SIZE is set, the pool gets one thread per core,
 * shared out among the WORKERS processes.
 *
 * libuv reads the variable when the pool first starts, so this module is the first import of
 * src/main.ts (before anything can queue work), and the cluster primary gives each worker its
 * share. It lives with the configuration (ARCHITECTURE rule 5: only src/config reads process.env),
 * apart from src/config/index.ts because it must run before any other import.
 */
export const threadPoolSize = (cores: number, workers = 1): number => Math.max(1, Math.round(cores / Math.max(1, workers)));

/** UV_THREADPOOL_SIZE as the operator set it (then it is left alone everywhere). */
export const configuredThreadPoolSize = process.env.UV_THREADPOOL_SIZE;

process.env.UV_THREADPOOL_SIZE ??= String(threadPoolSize(availableParallelism()));
