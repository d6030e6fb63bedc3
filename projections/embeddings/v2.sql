-- embeddings: one vector per fact, entity and turn, with the model that made it
-- and the sha256 of the text it was made from (the key of embedding_cache).
-- A tenant's vectors all come from one model; changing the model is a rebuild.
-- v2: the same table; a fact's text leaves out a hashed speaker's prefix (its key's
-- first 8 hex digits, different in every database), which moved the fact's vector.
CREATE TABLE embeddings (
    tenant_id   text        NOT NULL,
    item_kind   text        NOT NULL,
    item_id     text        NOT NULL,
    model       text        NOT NULL,
    dim         integer     NOT NULL,
    text_sha256 text        NOT NULL,
    embedding   vector(384) NOT NULL,
    PRIMARY KEY (tenant_id, item_kind, item_id)
);
-- @indexes: built after a bulk load
-- Cosine HNSW over every tenant; queries filter by tenant with iterative scans
-- (hnsw.iterative_scan = relaxed_order), see projectors/embeddings.py.
CREATE INDEX embeddings_hnsw ON embeddings USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
