-- embeddings: one vector per fact, entity and turn, with the model that made it
-- and the sha256 of the text it was made from (the key of embedding_cache).
-- A row holds the vector of the first model of the embedding chain whose vector of its
-- text the cache holds; a fallback model's rows keep that model's name, and queries
-- ask for one model's rows, so no answer compares vectors of two models.
-- v3: the same table; an index on the model finds the rows of the fallback models,
-- which the backfill moves to the first model (docs/adr/0013).
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
-- Cosine HNSW over every tenant; queries filter by tenant and model with iterative scans
-- (hnsw.iterative_scan = relaxed_order), see projectors/embedding_queries.py.
CREATE INDEX embeddings_hnsw ON embeddings USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
CREATE INDEX embeddings_model ON embeddings (model, tenant_id);
