-- entities: merged on normalised name + type + tenant (entity_id is "type:name").
CREATE TABLE entities (
    tenant_id      text             NOT NULL,
    entity_id      text             NOT NULL,
    name           text             NOT NULL,
    entity_type    text             NOT NULL,
    aliases        text[]           NOT NULL,
    description    text,
    mention_count  integer          NOT NULL,
    confidence     double precision NOT NULL,
    status         text             NOT NULL,
    first_seen_at  timestamptz      NOT NULL,
    last_seen_at   timestamptz      NOT NULL,
    first_position bigint           NOT NULL,
    last_position  bigint           NOT NULL,
    source_turns   text[]           NOT NULL,
    tsv            tsvector GENERATED ALWAYS AS (
        to_tsvector('simple', name || ' ' || coalesce(description, ''))) STORED,
    PRIMARY KEY (tenant_id, entity_id)
);
-- @indexes: built after a bulk load
CREATE INDEX entities_tsv ON entities USING gin (tsv);
CREATE INDEX entities_type ON entities (tenant_id, entity_type);
