export function StatusPage() { return <h1>StatusPage</h1>; }
