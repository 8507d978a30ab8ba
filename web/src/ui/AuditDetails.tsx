/** The fold under an audit record: where the request came from, and what the record holds. */
export function AuditDetails({ e, metadata }: { e: { id: string; ipAddress: string | null; userAgent: string | null; requestId: string | null }; metadata: string | null }) {
  return (
    <details>
      <summary>Details</summary>
      <dl className="kv">
        <dt>Address</dt>
        <dd>{e.ipAddress ?? "—"}</dd>
        <dt>Browser or client</dt>
        <dd>{e.userAgent ?? "—"}</dd>
        <dt>Request</dt>
        <dd>{e.requestId ? <code>{e.requestId}</code> : "—"}</dd>
        <dt>Record</dt>
        <dd>
          <code>{e.id}</code>
        </dd>
      </dl>
      {metadata && <pre>{metadata}</pre>}
    </details>
  );
}
