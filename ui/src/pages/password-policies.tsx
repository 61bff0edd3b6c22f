export function PasswordPoliciesPage() { return <h1>PasswordPoliciesPage</h1>; }
