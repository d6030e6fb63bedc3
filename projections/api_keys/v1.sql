-- api_keys: the keys that reach a tenant's data; only their sha256 is kept.
CREATE TABLE api_keys (
    tenant_id   text        NOT NULL,
    key_id      text        NOT NULL,
    key_sha256  text        NOT NULL,
    label       text        NOT NULL,
    issued_by   text,
    issued_at   timestamptz NOT NULL,
    revoked_at  timestamptz,
    PRIMARY KEY (tenant_id, key_id)
);
CREATE UNIQUE INDEX api_keys_hash ON api_keys (key_sha256);
-- @indexes
