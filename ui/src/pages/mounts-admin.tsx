export function MountsAdminPage(_props: { table?: 'secret' | 'auth' }) { return <h1>MountsAdminPage</h1>; }
