export function NamespacesPage() { return <h1>NamespacesPage</h1>; }
