export function AuditPage() { return <h1>AuditPage</h1>; }
