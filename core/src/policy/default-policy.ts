/**
 * The `default` policy every token gets unless created with no_default_policy:
 * enough for a token to manage itself, its leases and its cubbyhole, nothing
 * that reveals or changes anyone else's data.
 */
export const DEFAULT_POLICY_TEXT = `# A token may inspect, renew and revoke itself.
path "auth/token/lookup-self" {
  capabilities = ["read"]
}
path "auth/token/renew-self" {
  capabilities = ["update"]
}
path "auth/token/revoke-self" {
  capabilities = ["update"]
}

# A token may ask what it is allowed to do.
path "sys/capabilities-self" {
  capabilities = ["update"]
}
path "sys/internal/ui/resultant-acl" {
  capabilities = ["read"]
}

# A token may look up and renew the leases it holds (the lease id is the secret).
path "sys/leases/lookup" {
  capabilities = ["update"]
}
path "sys/leases/renew" {
  capabilities = ["update"]
}
path "sys/renew" {
  capabilities = ["update"]
}

# Hashing is a pure function of the input.
path "sys/tools/hash" {
  capabilities = ["update"]
}
path "sys/tools/hash/*" {
  capabilities = ["update"]
}

# Response wrapping: wrap, and look up or unwrap a token one holds.
path "sys/wrapping/wrap" {
  capabilities = ["update"]
}
path "sys/wrapping/lookup" {
  capabilities = ["update"]
}
path "sys/wrapping/unwrap" {
  capabilities = ["update"]
}

# Every token's private cubbyhole.
path "cubbyhole/*" {
  capabilities = ["create", "read", "update", "delete", "list", "scan"]
}
`;
