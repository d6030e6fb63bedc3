-- relationships: one directed typed edge per (source, relation, target); the
-- endpoints of a symmetric relation are stored in canonical order.
-- v2: the same tables; a retracted edge said again in a new turn comes back (v1 kept it
-- retracted whatever the user said later).
-- v3: the same rows; each end's index also holds the status, relation, confidence and key,
-- so a graph walk ranks the edges touching its frontier from the index alone and reads
-- only the rows it keeps (a hub's ~2,400 edges were read from the heap to keep 50).
CREATE TABLE relationships (
    tenant_id        text             NOT NULL,
    relationship_key text             NOT NULL,
    relationship_ids text[]           NOT NULL,
    source_entity_id text             NOT NULL,
    source_name      text             NOT NULL,
    source_type      text             NOT NULL,
    relation         text             NOT NULL,
    target_entity_id text             NOT NULL,
    target_name      text             NOT NULL,
    target_type      text             NOT NULL,
    is_symmetric     boolean          NOT NULL,
    context          text,
    confidence       double precision NOT NULL,
    mention_count    integer          NOT NULL,
    status           text             NOT NULL,
    first_seen_at    timestamptz      NOT NULL,
    last_seen_at     timestamptz      NOT NULL,
    first_position   bigint           NOT NULL,
    last_position    bigint           NOT NULL,
    source_turns     text[]           NOT NULL,
    PRIMARY KEY (tenant_id, relationship_key)
);
CREATE INDEX relationships_ids ON relationships USING gin (relationship_ids);
-- @indexes: built after a bulk load
CREATE INDEX relationships_source ON relationships (tenant_id, source_entity_id)
    INCLUDE (status, relation, confidence, relationship_key);
CREATE INDEX relationships_target ON relationships (tenant_id, target_entity_id)
    INCLUDE (status, relation, confidence, relationship_key);
