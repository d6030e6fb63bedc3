-- embeddings v3 made from a live v2 copy in place (projectors/embeddings.upgrade_in_place):
-- v3 only adds the index on the model, and a v2 copy's rows are what v3 writes for the
-- same events (every one of the tenant's model), so the copy equals one rebuilt as v3.
CREATE INDEX IF NOT EXISTS embeddings_model ON embeddings (model, tenant_id);
