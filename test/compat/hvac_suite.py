"""Drives Debian's hvac against a running Strongroom server, the way automation
uses it. Every call is recorded with its outcome; the result list is printed as
one JSON document on stdout (test/compat/hvac.test.ts reads it).

Environment: VAULT_ADDR, VAULT_TOKEN (root), UNSEAL_KEY (the only share),
AUDIT_FILE (a path the server may write), LEASE_MOUNT (a mounted lease-test
plugin with a role "r").
"""
import base64
import json
import os
import sys
import traceback

import hvac

URL = os.environ["VAULT_ADDR"]
ROOT = os.environ["VAULT_TOKEN"]
UNSEAL_KEY = os.environ["UNSEAL_KEY"]
AUDIT_FILE = os.environ["AUDIT_FILE"]
LEASES = os.environ["LEASE_MOUNT"]

c = hvac.Client(url=URL, token=ROOT)
results = []


def call(name, fn, check=None):
    """Runs one client call; `check` asserts on its answer. Returns the answer or None."""
    try:
        r = fn()
        if check is not None:
            check(r)
        results.append({"call": name, "ok": True})
        return r
    except Exception as e:  # noqa: BLE001 - every failure is recorded, never fatal
        detail = "%s: %s" % (type(e).__name__, e)
        if isinstance(e, AssertionError):
            detail += " | " + traceback.format_exc().strip().splitlines()[-2].strip()
        results.append({"call": name, "ok": False, "error": detail[:600]})
        return None


def refused(name, fn, kind, text=None):
    """A call that must fail with the hvac exception named `kind` (e.g. Forbidden, InvalidRequest), its message containing `text`."""
    try:
        fn()
        results.append({"call": name, "ok": False, "error": "succeeded but must be refused"})
    except Exception as e:  # noqa: BLE001
        ok = type(e).__name__ == kind and (text is None or text in str(e))
        results.append({"call": name, "ok": ok, **({"refused": kind} if ok else {"error": "%s: %s" % (type(e).__name__, e)})})


def b64(s):
    return base64.b64encode(s.encode()).decode()


def eq(a, b):
    assert a == b, "%r != %r" % (a, b)


# ---- sys: status ----
call("sys.read_health_status", lambda: c.sys.read_health_status(method="GET"), lambda r: eq(r["initialized"], True))
call("sys.read_seal_status", lambda: c.sys.read_seal_status(), lambda r: eq(r["sealed"], False))
call("sys.is_initialized", lambda: c.sys.is_initialized(), lambda r: eq(r, True))
call("sys.is_sealed", lambda: c.sys.is_sealed(), lambda r: eq(r, False))
call("sys.read_init_status", lambda: c.sys.read_init_status(), lambda r: eq(r["initialized"], True))
call("sys.read_leader_status", lambda: c.sys.read_leader_status(), lambda r: eq(r["is_self"], True))
call("sys.get_encryption_key_status", lambda: c.sys.get_encryption_key_status(), lambda r: eq(r["data"]["term"] >= 1, True))
call("sys.rotate_encryption_key", lambda: c.sys.rotate_encryption_key())
call("sys.get_encryption_key_status (after rotate)", lambda: c.sys.get_encryption_key_status(), lambda r: eq(r["data"]["term"] >= 2, True))
call("client.is_authenticated", lambda: c.is_authenticated(), lambda r: eq(r, True))

# ---- sys: mounts ----
call("sys.enable_secrets_engine kv v1", lambda: c.sys.enable_secrets_engine("kv", path="kv1", options={"version": "1"}))
call("sys.enable_secrets_engine kv v2", lambda: c.sys.enable_secrets_engine("kv", path="kv2", options={"version": "2"}, description="hvac kv2"))
call("sys.enable_secrets_engine transit", lambda: c.sys.enable_secrets_engine("transit", path="transit"))
call("sys.enable_secrets_engine kv (to move)", lambda: c.sys.enable_secrets_engine("kv", path="kvmove", options={"version": "1"}))
call("sys.list_mounted_secrets_engines", lambda: c.sys.list_mounted_secrets_engines(), lambda r: eq("kv2/" in r["data"], True))
call("sys.read_mount_configuration", lambda: c.sys.read_mount_configuration("kv2"), lambda r: eq("max_lease_ttl" in r["data"], True))
call("sys.tune_mount_configuration", lambda: c.sys.tune_mount_configuration("kv2", default_lease_ttl="1h", max_lease_ttl="2h"))
call("sys.read_mount_configuration (tuned)", lambda: c.sys.read_mount_configuration("kv2"), lambda r: eq(r["data"]["default_lease_ttl"], 3600))
call("sys.read_mount_configuration (effective TTLs: the system's)", lambda: c.sys.read_mount_configuration("kv1"), lambda r: (eq(r["data"]["default_lease_ttl"], 2764800), eq(r["data"]["max_lease_ttl"], 2764800)))
call("sys.enable_secrets_engine generic (kv version 1)", lambda: c.sys.enable_secrets_engine("generic", path="gen"))
call("kv.v1.create_or_update_secret (generic)", lambda: c.secrets.kv.v1.create_or_update_secret("old", {"v": "g"}, mount_point="gen"))
call("kv.v1.read_secret (generic)", lambda: c.secrets.kv.v1.read_secret("old", mount_point="gen"), lambda r: eq(r["data"], {"v": "g"}))
call("sys.retrieve_mount_option", lambda: c.sys.retrieve_mount_option("kv2", "version"), lambda r: eq(str(r), "2"))
call("kv.v1.create_or_update_secret (before move)", lambda: c.secrets.kv.v1.create_or_update_secret("moving", {"v": "1"}, mount_point="kvmove"))
call("sys.move_backend", lambda: c.sys.move_backend("kvmove", "kvmoved"))
call("kv.v1.read_secret (after move)", lambda: c.secrets.kv.v1.read_secret("moving", mount_point="kvmoved"), lambda r: eq(r["data"], {"v": "1"}))
call("sys.disable_secrets_engine", lambda: c.sys.disable_secrets_engine("kvmoved"))

# ---- sys: policies ----
POLICY = 'path "kv1/*" { capabilities = ["read", "list"] }\npath "kv2/data/*" { capabilities = ["create", "read", "update"] }'
call("sys.create_or_update_policy (HCL)", lambda: c.sys.create_or_update_policy("hvac-reader", POLICY))
call("sys.create_or_update_policy (dict)", lambda: c.sys.create_or_update_policy("hvac-dict", {"path": {"kv1/*": {"capabilities": ["read"]}}}))
call("sys.read_policy", lambda: c.sys.read_policy("hvac-reader"), lambda r: eq("kv1/*" in r["data"]["rules"], True))
call("sys.list_policies", lambda: c.sys.list_policies(), lambda r: eq("hvac-reader" in r["data"]["policies"], True))
call("sys.delete_policy", lambda: c.sys.delete_policy("hvac-dict"))
call("sys.get_capabilities", lambda: c.sys.get_capabilities(paths=["kv1/x"], token=ROOT), lambda r: eq("root" in json.dumps(r), True))

# ---- sys: audit ----
call("sys.enable_audit_device", lambda: c.sys.enable_audit_device("file", options={"file_path": AUDIT_FILE}))
call("sys.list_enabled_audit_devices", lambda: c.sys.list_enabled_audit_devices(), lambda r: eq("file/" in r["data"], True))
call("sys.calculate_hash", lambda: c.sys.calculate_hash("file", "hello"), lambda r: eq(r["data"]["hash"].startswith("hmac-sha256:"), True))
refused("sys.calculate_hash (no such device)", lambda: c.sys.calculate_hash("no-device", "hello"), "InvalidRequest", "unknown audit backend")

# ---- sys: plugins (hvac 0.11 has no plugin methods; its adapter is what automation falls back to) ----
call("adapter.get sys/plugins/catalog", lambda: c.adapter.get("/v1/sys/plugins/catalog"), lambda r: eq("kv" in r["data"]["secret"], True))
call("adapter.get sys/plugins/catalog/secret/kv", lambda: c.adapter.get("/v1/sys/plugins/catalog/secret/kv"), lambda r: eq(r["data"]["name"], "kv"))

# ---- kv v1 ----
call("kv.v1.create_or_update_secret", lambda: c.secrets.kv.v1.create_or_update_secret("app/db", {"password": "pw1"}, mount_point="kv1"))
call("kv.v1.read_secret", lambda: c.secrets.kv.v1.read_secret("app/db", mount_point="kv1"), lambda r: eq(r["data"], {"password": "pw1"}))
call("kv.v1.list_secrets", lambda: c.secrets.kv.v1.list_secrets("app", mount_point="kv1"), lambda r: eq(r["data"]["keys"], ["db"]))
call("client.write", lambda: c.write("kv1/legacy", value="x"))
call("client.read", lambda: c.read("kv1/legacy"), lambda r: eq(r["data"], {"value": "x"}))
call("client.list", lambda: c.list("kv1"), lambda r: eq(sorted(r["data"]["keys"]), ["app/", "legacy"]))
call("client.delete", lambda: c.delete("kv1/legacy"))
call("kv.v1.delete_secret", lambda: c.secrets.kv.v1.delete_secret("app/db", mount_point="kv1"))

# ---- kv v2 ----
call("kv.v2.configure", lambda: c.secrets.kv.v2.configure(max_versions=5, mount_point="kv2"))
call("kv.v2.read_configuration", lambda: c.secrets.kv.v2.read_configuration(mount_point="kv2"), lambda r: eq(r["data"]["max_versions"], 5))
call("kv.v2.create_or_update_secret", lambda: c.secrets.kv.v2.create_or_update_secret("svc", secret={"a": "1"}, mount_point="kv2"), lambda r: eq(r["data"]["version"], 1))
call("kv.v2.create_or_update_secret (cas)", lambda: c.secrets.kv.v2.create_or_update_secret("svc", secret={"a": "2"}, cas=1, mount_point="kv2"), lambda r: eq(r["data"]["version"], 2))
refused("kv.v2.create_or_update_secret (cas -1)", lambda: c.secrets.kv.v2.create_or_update_secret("svc", secret={"a": "x"}, cas=-1, mount_point="kv2"), "InvalidRequest", "check-and-set parameter did not match the current version")
call("kv.v2.patch", lambda: c.secrets.kv.v2.patch("svc", secret={"b": "3"}, mount_point="kv2"))
call("kv.v2.read_secret_version", lambda: c.secrets.kv.v2.read_secret_version("svc", mount_point="kv2"), lambda r: eq(r["data"]["data"], {"a": "2", "b": "3"}))
call("kv.v2.read_secret_version (v1)", lambda: c.secrets.kv.v2.read_secret_version("svc", version=1, mount_point="kv2"), lambda r: eq(r["data"]["data"], {"a": "1"}))
call("kv.v2.list_secrets", lambda: c.secrets.kv.v2.list_secrets("", mount_point="kv2"), lambda r: eq(r["data"]["keys"], ["svc"]))
call("kv.v2.read_secret_metadata", lambda: c.secrets.kv.v2.read_secret_metadata("svc", mount_point="kv2"), lambda r: eq(r["data"]["current_version"], 3))
call("kv.v2.update_metadata", lambda: c.secrets.kv.v2.update_metadata("svc", max_versions=3, mount_point="kv2"))
call("kv.v2.delete_latest_version_of_secret", lambda: c.secrets.kv.v2.delete_latest_version_of_secret("svc", mount_point="kv2"))
call("kv.v2.undelete_secret_versions", lambda: c.secrets.kv.v2.undelete_secret_versions("svc", versions=[3], mount_point="kv2"))
call("kv.v2.delete_secret_versions", lambda: c.secrets.kv.v2.delete_secret_versions("svc", versions=[1], mount_point="kv2"))
call("kv.v2.destroy_secret_versions", lambda: c.secrets.kv.v2.destroy_secret_versions("svc", versions=[2], mount_point="kv2"))
call("kv.v2.read_secret_metadata (after)", lambda: c.secrets.kv.v2.read_secret_metadata("svc", mount_point="kv2"), lambda r: eq(r["data"]["versions"]["2"]["destroyed"], True))
call("kv.v2.delete_metadata_and_all_versions", lambda: c.secrets.kv.v2.delete_metadata_and_all_versions("svc", mount_point="kv2"))

# ---- transit ----
t = c.secrets.transit
call("transit.create_key", lambda: t.create_key("k1"))
call("transit.create_key (exportable, ed25519)", lambda: t.create_key("sig", key_type="ed25519", exportable=True, allow_plaintext_backup=True))
call("transit.create_key (empty strings as false)", lambda: t.create_key("empty-flags", exportable="", allow_plaintext_backup=""))
call("transit.read_key (empty strings as false)", lambda: t.read_key("empty-flags"), lambda r: (eq(r["data"]["exportable"], False), eq(r["data"]["allow_plaintext_backup"], False)))
refused("transit.backup_key (no allow_plaintext_backup)", lambda: t.backup_key("empty-flags"), "InternalServerError", "plaintext backup is disallowed on the policy")
call("transit.create_key (rsa-2048)", lambda: t.create_key("rsa", key_type="rsa-2048"))
pss = call("client.write transit/sign (pss, salt_length -1)", lambda: c.write("transit/sign/rsa", input=b64("msg"), signature_algorithm="pss", salt_length="-1"))
if pss:
    call("client.write transit/verify (pss, salt_length -1)", lambda: c.write("transit/verify/rsa", input=b64("msg"), signature=pss["data"]["signature"], signature_algorithm="pss", salt_length="-1"), lambda r: eq(r["data"]["valid"], True))
call("transit.read_key", lambda: t.read_key("k1"), lambda r: eq(r["data"]["type"], "aes256-gcm96"))
call("transit.list_keys", lambda: t.list_keys(), lambda r: eq(sorted(r["data"]["keys"]), ["empty-flags", "k1", "rsa", "sig"]))
call("transit.update_key_configuration", lambda: t.update_key_configuration("k1", deletion_allowed=True))
call("transit.rotate_key", lambda: t.rotate_key("k1"))
enc = call("transit.encrypt_data", lambda: t.encrypt_data("k1", plaintext=b64("secret text")), lambda r: eq(r["data"]["ciphertext"].startswith("service:v2:"), True))
if enc:
    call("transit.decrypt_data", lambda: t.decrypt_data("k1", ciphertext=enc["data"]["ciphertext"]), lambda r: eq(base64.b64decode(r["data"]["plaintext"]).decode(), "secret text"))
    call("transit.rewrap_data", lambda: t.rewrap_data("k1", ciphertext=enc["data"]["ciphertext"]), lambda r: eq(r["data"]["ciphertext"].startswith("service:v2:"), True))
    from_vault = enc["data"]["ciphertext"].replace("service:", "vault:", 1)
    call("transit.decrypt_data (vault: prefix)", lambda: t.decrypt_data("k1", ciphertext=from_vault), lambda r: eq(base64.b64decode(r["data"]["plaintext"]).decode(), "secret text"))
    call("transit.rewrap_data (vault: prefix in, service: out)", lambda: t.rewrap_data("k1", ciphertext=from_vault), lambda r: eq(r["data"]["ciphertext"].startswith("service:v2:"), True))
call("transit.encrypt_data (batch)", lambda: t.encrypt_data("k1", plaintext=None, batch_input=[{"plaintext": b64("a")}, {"plaintext": b64("b")}]), lambda r: eq(len(r["data"]["batch_results"]), 2))
call("transit.generate_data_key", lambda: t.generate_data_key("k1", key_type="plaintext"), lambda r: eq(len(base64.b64decode(r["data"]["plaintext"])), 32))
call("transit.generate_random_bytes", lambda: t.generate_random_bytes(n_bytes=16), lambda r: eq(len(base64.b64decode(r["data"]["random_bytes"])), 16))
call("transit.hash_data", lambda: t.hash_data(b64("abc"), algorithm="sha2-256"), lambda r: eq(r["data"]["sum"], "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
mac = call("transit.generate_hmac", lambda: t.generate_hmac("k1", b64("abc")), lambda r: eq(r["data"]["hmac"].startswith("service:v2:"), True))
if mac:
    call("transit.verify_signed_data (HMAC, vault: prefix)", lambda: t.verify_signed_data("k1", b64("abc"), hmac=mac["data"]["hmac"].replace("service:", "vault:", 1)), lambda r: eq(r["data"]["valid"], True))
sig = call("transit.sign_data", lambda: t.sign_data("sig", hash_input=b64("msg")), lambda r: eq(r["data"]["signature"].startswith("service:v1:"), True))
if sig:
    call("transit.verify_signed_data", lambda: t.verify_signed_data("sig", hash_input=b64("msg"), signature=sig["data"]["signature"]), lambda r: eq(r["data"]["valid"], True))
    call("transit.verify_signed_data (vault: prefix)", lambda: t.verify_signed_data("sig", hash_input=b64("msg"), signature=sig["data"]["signature"].replace("service:", "vault:", 1)), lambda r: eq(r["data"]["valid"], True))
call("transit.export_key", lambda: t.export_key("sig", key_type="signing-key"), lambda r: eq("1" in r["data"]["keys"], True))
bk = call("transit.backup_key", lambda: t.backup_key("sig"), lambda r: eq(len(r["data"]["backup"]) > 0, True))
if bk:
    call("transit.restore_key", lambda: t.restore_key(bk["data"]["backup"], name="sig-restored"))
    refused("transit.restore_key (onto an existing key)", lambda: t.restore_key(bk["data"]["backup"], name="sig-restored"), "InternalServerError", 'key "sig-restored" already exists')
call("transit.update_key_configuration (min versions)", lambda: t.update_key_configuration("k1", min_decryption_version=2))
call("transit.trim_key", lambda: t.trim_key("k1", min_version=2))
call("transit.delete_key", lambda: t.delete_key("k1"))

# ---- approle ----
a = c.auth.approle
call("sys.enable_auth_method approle", lambda: c.sys.enable_auth_method("approle"))
call("sys.list_auth_methods", lambda: c.sys.list_auth_methods(), lambda r: eq("approle/" in r["data"], True))
call("sys.read_auth_method_tuning", lambda: c.sys.read_auth_method_tuning("approle"), lambda r: eq(r["data"]["max_lease_ttl"], 2764800))
call("sys.tune_auth_method", lambda: c.sys.tune_auth_method("approle", default_lease_ttl="30m"))
call("approle.create_or_update_approle", lambda: a.create_or_update_approle("web", token_policies=["hvac-reader"], token_ttl="10m", token_max_ttl="30m"))
call("approle.read_role", lambda: a.read_role("web"), lambda r: eq(r["data"]["token_ttl"], 600))
call("approle.list_roles", lambda: a.list_roles(), lambda r: eq(r["data"]["keys"], ["web"]))
rid = call("approle.read_role_id", lambda: a.read_role_id("web"))
call("approle.update_role_id", lambda: a.update_role_id("web", "custom-role-id"))
sid = call("approle.generate_secret_id", lambda: a.generate_secret_id("web"), lambda r: eq(len(r["data"]["secret_id"]) > 0, True))
sid2 = call("approle.generate_secret_id (metadata)", lambda: a.generate_secret_id("web", metadata={"host": "h1"}))
csid = call("approle.create_custom_secret_id", lambda: a.create_custom_secret_id("web", secret_id="my-custom-secret-id"))
if sid:
    call("approle.read_secret_id", lambda: a.read_secret_id("web", sid["data"]["secret_id"]), lambda r: eq(r["data"]["secret_id_accessor"], sid["data"]["secret_id_accessor"]))
call("approle.list_secret_id_accessors", lambda: a.list_secret_id_accessors("web"), lambda r: eq(len(r["data"]["keys"]) >= 2, True))
if sid2:
    call("approle.read_secret_id_accessor", lambda: a.read_secret_id_accessor("web", sid2["data"]["secret_id_accessor"]), lambda r: eq(r["data"]["metadata"], {"host": "h1"}))
    call("approle.destroy_secret_id_accessor", lambda: a.destroy_secret_id_accessor("web", sid2["data"]["secret_id_accessor"]))
login = None
if sid:
    login = call("approle.login", lambda: a.login("custom-role-id", sid["data"]["secret_id"], use_token=False), lambda r: eq("hvac-reader" in r["auth"]["token_policies"], True))
    call("approle.destroy_secret_id", lambda: a.destroy_secret_id("web", sid["data"]["secret_id"]))

# ---- userpass ----
u = c.auth.userpass
call("sys.enable_auth_method userpass", lambda: c.sys.enable_auth_method("userpass"))
call("userpass.create_or_update_user", lambda: u.create_or_update_user("hvac-user", password="hvac-pw", policies=["hvac-reader"]))
call("userpass.read_user", lambda: u.read_user("hvac-user"), lambda r: (eq(r["data"]["token_policies"], ["hvac-reader"]), eq("password" in r["data"], False)))
call("userpass.list_user", lambda: u.list_user(), lambda r: eq(r["data"]["keys"], ["hvac-user"]))
call("userpass.update_password_on_user", lambda: u.update_password_on_user("hvac-user", "hvac-pw2"))
call("userpass.login", lambda: u.login("hvac-user", "hvac-pw2", use_token=False), lambda r: eq("hvac-reader" in r["auth"]["token_policies"], True))
refused("userpass.login (old password)", lambda: u.login("hvac-user", "hvac-pw", use_token=False), "InvalidRequest")
refused("userpass.login (no such user)", lambda: u.login("nobody", "hvac-pw", use_token=False), "InvalidRequest")
call("userpass.delete_user", lambda: u.delete_user("hvac-user"))
call("sys.disable_auth_method userpass", lambda: c.sys.disable_auth_method("userpass"))

# ---- leases (the lease-test plugin issues leased credentials) ----
creds = call("client.read (leased credentials)", lambda: c.read(LEASES + "/creds/r"), lambda r: eq(r["lease_id"].startswith(LEASES + "/creds/r/"), True))
if creds:
    lid = creds["lease_id"]
    call("sys.read_lease", lambda: c.sys.read_lease(lid), lambda r: eq(r["data"]["id"], lid))
    call("sys.list_leases", lambda: c.sys.list_leases(LEASES + "/creds/r"), lambda r: eq(len(r["data"]["keys"]), 1))
    call("sys.renew_lease", lambda: c.sys.renew_lease(lid, increment=600), lambda r: eq(r["lease_duration"], 600))
    call("client.renew_secret (legacy sys/leases/renew)", lambda: c.renew_secret(lid, increment=700), lambda r: eq(r["lease_duration"], 700))
    call("sys.revoke_lease", lambda: c.sys.revoke_lease(lid))
c.read(LEASES + "/creds/r")
call("sys.revoke_prefix", lambda: c.sys.revoke_prefix(LEASES + "/creds/r"))
c.read(LEASES + "/creds/r")
call("sys.revoke_force", lambda: c.sys.revoke_force(LEASES + "/creds/r"))
if login:
    call("sys.list_leases (login tokens under auth/)", lambda: c.sys.list_leases("auth/approle/login"), lambda r: eq(len(r["data"]["keys"]) >= 1, True))

# ---- tokens ----
tk = c.auth.token
child = call("token.create", lambda: tk.create(policies=["hvac-reader"], ttl="1h"), lambda r: eq(r["auth"]["policies"], ["default", "hvac-reader"]))
orphan = call("token.create (no_parent)", lambda: tk.create(policies=["default"], ttl="1h", no_parent=True))
call("token.lookup_self", lambda: tk.lookup_self(), lambda r: eq(r["data"]["policies"], ["root"]))
if child:
    ct = child["auth"]["client_token"]
    acc = child["auth"]["accessor"]
    call("token.lookup", lambda: tk.lookup(ct), lambda r: eq(r["data"]["accessor"], acc))
    call("token.lookup_accessor", lambda: tk.lookup_accessor(acc), lambda r: eq(r["data"]["accessor"], acc))
    call("token.renew", lambda: tk.renew(ct, increment="2h"), lambda r: eq(r["auth"]["lease_duration"] > 0, True))
    call("token.renew_accessor", lambda: tk.renew_accessor(acc), lambda r: eq(r["auth"]["accessor"], acc))
    call("token.list_accessors", lambda: tk.list_accessors(), lambda r: eq(acc in r["data"]["keys"], True))
    user = hvac.Client(url=URL, token=ct)
    refused("kv.v2.create_or_update_secret (child token without the capability)", lambda: user.secrets.kv.v2.create_or_update_secret("x", secret={"a": "b"}, mount_point="kv1"), "Forbidden")
    call("token.renew_self (child)", lambda: user.auth.token.renew_self(), lambda r: eq(r["auth"]["client_token"], ct))
    call("token.revoke_self (child)", lambda: user.auth.token.revoke_self())
    refused("token.lookup (revoked)", lambda: tk.lookup(ct), "Forbidden")
    refused("token.lookup_accessor (revoked)", lambda: tk.lookup_accessor(acc), "Forbidden")
call("token.create_or_update_role", lambda: tk.create_or_update_role("ops", allowed_policies=["hvac-reader"], orphan=True))
call("token.read_role", lambda: tk.read_role("ops"), lambda r: eq(r["data"]["orphan"], True))
call("token.list_roles", lambda: tk.list_roles(), lambda r: eq(r["data"]["keys"], ["ops"]))
from_role = call("token.create (role_name)", lambda: tk.create(role_name="ops", policies=["hvac-reader"]), lambda r: eq(r["auth"]["orphan"], True))
if from_role:
    call("token.revoke_accessor", lambda: tk.revoke_accessor(from_role["auth"]["accessor"]))
call("token.delete_role", lambda: tk.delete_role("ops"))
call("sys.create_or_update_policy (token creator)", lambda: c.sys.create_or_update_policy("token-creator", 'path "auth/token/create" { capabilities = ["update"] }'))
parent = call("token.create (parent)", lambda: tk.create(policies=["token-creator"], ttl="1h"))
if parent:
    pc = hvac.Client(url=URL, token=parent["auth"]["client_token"])
    kid = call("token.create (grandchild)", lambda: pc.auth.token.create(policies=["token-creator"], ttl="30m"))
    call("token.revoke_and_orphan_children", lambda: tk.revoke_and_orphan_children(parent["auth"]["client_token"]))
    if kid:
        call("token.lookup (orphaned child survives)", lambda: tk.lookup(kid["auth"]["client_token"]), lambda r: eq(r["data"]["orphan"], True))
        call("token.revoke", lambda: tk.revoke(kid["auth"]["client_token"]))
if orphan:
    call("token.revoke (orphan)", lambda: tk.revoke(orphan["auth"]["client_token"]))
call("token.tidy", lambda: tk.tidy())

# ---- response wrapping ----
call("kv.v1.create_or_update_secret (to wrap)", lambda: c.secrets.kv.v1.create_or_update_secret("wrapped", {"k": "wrapped-value"}, mount_point="kv1"))
w = call("client.read (wrap_ttl)", lambda: c.read("kv1/wrapped", wrap_ttl="2m"), lambda r: (eq(r["data"], None), eq(r["wrap_info"]["ttl"], 120)))
if w:
    wt = w["wrap_info"]["token"]
    call("adapter.post sys/wrapping/lookup", lambda: c.adapter.post("/v1/sys/wrapping/lookup", json={"token": wt}), lambda r: eq(r["data"]["creation_path"], "kv1/wrapped"))
    rw = call("adapter.post sys/wrapping/rewrap", lambda: c.adapter.post("/v1/sys/wrapping/rewrap", json={"token": wt}), lambda r: eq(r["wrap_info"]["ttl"], 120))
    if rw:
        call("sys.unwrap (token in the body)", lambda: c.sys.unwrap(rw["wrap_info"]["token"]), lambda r: eq(r["data"], {"k": "wrapped-value"}))
        refused("sys.unwrap (second time)", lambda: c.sys.unwrap(rw["wrap_info"]["token"]), "InvalidRequest")
w2 = call("token.create (wrap_ttl)", lambda: tk.create(policies=["default"], ttl="10m", wrap_ttl="60s"), lambda r: eq(len(r["wrap_info"]["wrapped_accessor"]) > 0, True))
if w2:
    holder = hvac.Client(url=URL, token=w2["wrap_info"]["token"])
    call("client.unwrap (wrapping token as the client token)", lambda: holder.sys.unwrap(), lambda r: eq(r["auth"]["accessor"], w2["wrap_info"]["wrapped_accessor"]))
    refused("client.unwrap (spent wrapping token as the client token)", lambda: holder.sys.unwrap(), "InvalidRequest", "wrapping token is not valid or does not exist")
ww = call("adapter.post sys/wrapping/wrap", lambda: c.adapter.post("/v1/sys/wrapping/wrap", json={"any": "thing"}, wrap_ttl="30s"), lambda r: eq(r["wrap_info"]["ttl"], 30))
if ww:
    call("client.unwrap (deprecated alias)", lambda: c.unwrap(ww["wrap_info"]["token"]), lambda r: eq(r["data"], {"any": "thing"}))
we = call("adapter.post sys/wrapping/wrap (empty object)", lambda: c.adapter.post("/v1/sys/wrapping/wrap", json={}, wrap_ttl="30s"), lambda r: eq(r["wrap_info"]["ttl"], 30))
if we:
    call("sys.unwrap (empty object)", lambda: c.sys.unwrap(we["wrap_info"]["token"]), lambda r: eq(r["data"], {}))

# ---- cubbyhole: the caller's own kv store (hvac has no class for it; kv v1 on mount "cubbyhole" and the plain calls) ----
call("kv.v1.create_or_update_secret (cubbyhole)", lambda: c.secrets.kv.v1.create_or_update_secret("hvac/note", {"n": "mine"}, mount_point="cubbyhole"))
call("kv.v1.read_secret (cubbyhole)", lambda: c.secrets.kv.v1.read_secret("hvac/note", mount_point="cubbyhole"), lambda r: eq(r["data"], {"n": "mine"}))
call("kv.v1.list_secrets (cubbyhole)", lambda: c.secrets.kv.v1.list_secrets("hvac", mount_point="cubbyhole"), lambda r: eq(r["data"]["keys"], ["note"]))
call("client.write (cubbyhole)", lambda: c.write("cubbyhole/plain", value="p"))
call("client.read (cubbyhole)", lambda: c.read("cubbyhole/plain"), lambda r: eq(r["data"], {"value": "p"}))
nb = call("token.create (cubbyhole neighbour)", lambda: tk.create(policies=["default"], ttl="10m"))
if nb:
    nc_ = hvac.Client(url=URL, token=nb["auth"]["client_token"])
    refused("kv.v1.read_secret (another token's cubbyhole)", lambda: nc_.secrets.kv.v1.read_secret("hvac/note", mount_point="cubbyhole"), "InvalidPath")
call("kv.v1.delete_secret (cubbyhole)", lambda: c.secrets.kv.v1.delete_secret("hvac/note", mount_point="cubbyhole"))

# ---- generate-root (OTP scheme) ----
call("sys.read_root_generation_progress", lambda: c.sys.read_root_generation_progress(), lambda r: eq(r["started"], False))
start = call("sys.start_root_token_generation", lambda: c.sys.start_root_token_generation(), lambda r: eq(len(r["otp"]), r["otp_length"]))
call("sys.cancel_root_generation", lambda: c.sys.cancel_root_generation())
start = call("sys.start_root_token_generation (again)", lambda: c.sys.start_root_token_generation())
if start:
    done = call("sys.generate_root", lambda: c.sys.generate_root(UNSEAL_KEY, start["nonce"]), lambda r: eq(r["complete"], True))
    if done:
        enc_tok = done["encoded_token"]
        raw = base64.b64decode(enc_tok + "=" * (-len(enc_tok) % 4))
        new_root = bytes(x ^ y for x, y in zip(raw, start["otp"].encode())).decode()
        nc = hvac.Client(url=URL, token=new_root)
        call("token.lookup_self (generated root)", lambda: nc.auth.token.lookup_self(), lambda r: eq(r["data"]["policies"], ["root"]))

# ---- SSH zero-address roles, a policy with the brace on the next line, sudo on token create, token counters ----
call("sys.enable_secrets_engine (ssh)", lambda: c.sys.enable_secrets_engine("ssh", path="hvac-ssh"))
call("write ssh config/zeroaddress (before its role)", lambda: c.write("hvac-ssh/config/zeroaddress", roles="zr"))
call("write ssh role (OTP, no cidr_list)", lambda: c.write("hvac-ssh/roles/zr", key_type="otp", default_user="ubuntu"))
call("write ssh creds (zero-address)", lambda: c.write("hvac-ssh/creds/zr", ip="192.0.2.9"), lambda r: eq(r["data"]["ip"], "192.0.2.9"))
call("write ssh config/ca", lambda: c.write("hvac-ssh/config/ca", key_type="ed25519"))
call("delete ssh config/ca (204)", lambda: c.delete("hvac-ssh/config/ca"), lambda r: eq(r, None))  # hvac gives None for an empty 204
call("sys.create_or_update_policy (brace on the next line)", lambda: c.sys.create_or_update_policy("hvac-sudo-create", 'path "auth/token/create"\n{\n  capabilities = ["create", "update", "sudo"]\n}\n'))
sudo_tok = call("token.create (sudo on auth/token/create)", lambda: tk.create(policies=["hvac-sudo-create"], ttl="10m"))
if sudo_tok:
    sc = hvac.Client(url=URL, token=sudo_tok["auth"]["client_token"])
    call("token.create (no_parent, with sudo)", lambda: sc.auth.token.create(no_parent=True, policies=["hvac-reader"], ttl="5m"), lambda r: eq((r["auth"]["orphan"], r["auth"]["policies"]), (True, ["default", "hvac-reader"])))
call("sys.create_or_update_policy (token create without sudo)", lambda: c.sys.create_or_update_policy("hvac-plain-create", 'path "auth/token/create" { capabilities = ["create", "update"] }'))
plain_tok = call("token.create (no sudo)", lambda: tk.create(policies=["hvac-plain-create"], ttl="10m"))
if plain_tok:
    pl = hvac.Client(url=URL, token=plain_tok["auth"]["client_token"])
    refused("token.create (no_parent, without sudo)", lambda: pl.auth.token.create(no_parent=True), "InvalidRequest", "root or sudo privileges required to create orphan token")
call("read sys/internal/counters/tokens", lambda: c.read("sys/internal/counters/tokens"), lambda r: eq(r["data"]["counters"]["service_tokens"]["total"] > 0, True))

# ---- rekey ----
call("sys.read_rekey_progress", lambda: c.sys.read_rekey_progress(), lambda r: eq(r["started"], False))
rk = call("sys.start_rekey", lambda: c.sys.start_rekey(secret_shares=3, secret_threshold=2), lambda r: eq(r["n"], 3))
call("sys.cancel_rekey", lambda: c.sys.cancel_rekey())
rk = call("sys.start_rekey (again)", lambda: c.sys.start_rekey(secret_shares=3, secret_threshold=2))
if rk:
    done = call("sys.rekey", lambda: c.sys.rekey(UNSEAL_KEY, nonce=rk["nonce"]), lambda r: eq(len(r["keys"]), 3))
    if done:
        new_keys = done["keys"]
        call("sys.seal", lambda: c.sys.seal())
        refused("sys.submit_unseal_key (the old key)", lambda: c.sys.submit_unseal_key(UNSEAL_KEY), "InvalidRequest")
        call("sys.submit_unseal_key (reset)", lambda: c.sys.submit_unseal_key(reset=True))
        call("sys.submit_unseal_keys (new keys)", lambda: c.sys.submit_unseal_keys(new_keys[:2]), lambda r: eq(r["sealed"], False))

# ---- rekey backup and verification ----
refused("sys.read_backup_keys (none)", lambda: c.sys.read_backup_keys(), "InvalidRequest", "no backed-up keys found")
call("adapter.delete sys/rekey/backup", lambda: c.adapter.delete("/v1/sys/rekey/backup"))
current_keys = new_keys[:2] if rk and done else [UNSEAL_KEY]
rv = call("sys.start_rekey (require_verification)", lambda: c.sys.start_rekey(secret_shares=2, secret_threshold=2, require_verification=True), lambda r: eq(r["verification_required"], True))
if rv:
    upd = call("sys.rekey_multi (to verification)", lambda: c.sys.rekey_multi(current_keys, nonce=rv["nonce"]), lambda r: eq((r["complete"], r["verification_required"], len(r["keys"])), (True, True, 2)))
    if upd:
        call("sys.read_rekey_verify_progress", lambda: c.sys.read_rekey_verify_progress(), lambda r: eq((r["nonce"], r["progress"]), (upd["verification_nonce"], 0)))
        again = call("sys.cancel_rekey_verify (new nonce)", lambda: c.sys.cancel_rekey_verify(), lambda r: eq(r["nonce"] != upd["verification_nonce"], True))
        if again:
            call("sys.rekey_verify_multi", lambda: c.sys.rekey_verify_multi(upd["keys"], nonce=again["nonce"]), lambda r: eq(r["complete"], True))
            call("sys.seal (after a verified rekey)", lambda: c.sys.seal())
            call("sys.submit_unseal_keys (the verified keys)", lambda: c.sys.submit_unseal_keys(upd["keys"]), lambda r: eq(r["sealed"], False))

# ---- clean-up calls ----
call("sys.disable_audit_device", lambda: c.sys.disable_audit_device("file"))
call("sys.disable_auth_method", lambda: c.sys.disable_auth_method("approle"))

json.dump(results, sys.stdout)
