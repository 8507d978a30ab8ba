import { Button } from "../../ui/Button";

/** A person in words: their name, else their address. */
export const who = (p: { fullName?: string | null; email?: string | null } | null | undefined) => p?.fullName || p?.email || "someone";

/** "1 account", "3 accounts". */
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A list in words: "a", "a and b", "a, b and c". */
export const words = (items: string[]) => (items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`);

/**
 * The pages of a numbered list: where we are, how many there are, and the way back and on. The
 * count is announced politely when the page changes.
 */
export function Pager({ page, pages, count, noun, onPage, busy }: { page: number; pages: number; count: number; noun: [string, string]; onPage: (page: number) => void; busy?: boolean }) {
  const total = `${count} ${count === 1 ? noun[0] : noun[1]}`;
  if (pages <= 1) {
    return (
      <p className="pager muted" role="status" aria-live="polite">
        {total}
      </p>
    );
  }
  return (
    <nav className="pager" aria-label={`Pages of ${noun[1]}`}>
      <Button variant="secondary" size="small" isDisabled={page <= 1 || busy} onPress={() => onPage(page - 1)}>
        Previous
      </Button>
      <span role="status" aria-live="polite">
        Page {page} of {pages} · {total}
      </span>
      <Button variant="secondary" size="small" isDisabled={page >= pages || busy} onPress={() => onPage(page + 1)}>
        Next
      </Button>
    </nav>
  );
}
