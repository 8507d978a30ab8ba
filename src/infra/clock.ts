/** Injectable time, so expiry rules are tested without waiting. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * Real time plus an offset that tests move by hand: events keep their order, and a test can jump
 * past an expiry without waiting for it.
 */
export class ManualClock implements Clock {
  private offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  advance(seconds: number): void {
    this.offsetMs += seconds * 1000;
  }
  reset(): void {
    this.offsetMs = 0;
  }
}

let application: Clock = systemClock;

/**
 * The running application's clock, for the reads that decide a member's role (a role grant is in
 * force by time: src/modules/access/memberships.repository.ts). The composition root sets it to
 * its own clock (tests: their ManualClock), so the role ends when the rest of the service says the
 * grant ended. One per process: a process runs one container.
 */
export const applicationClock: Clock = { now: () => application.now() };

export function useApplicationClock(clock: Clock): void {
  application = clock;
}
