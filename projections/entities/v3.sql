-- entities: merged on normalised name + type + tenant (entity_id is "type:name").
-- v2: tsv also holds the aliases' words, so an entity a request names by an alias alone
-- ("Bobby O" for Robert Okoye) is found (v1 searched the name and description only).
-- v3: merges (EntitiesMerged, EntitiesSplit): merged_into names the entity a row reads as
-- (NULL: itself), kept_apart the entities a split separated it from, which no merge may
-- join it with again. Rows are never deleted by a merge.
-- A function of ours, because a generated column takes only immutable functions and
-- array_to_string is stable (for a text[] it depends on nothing but its input).
CREATE FUNCTION entity_words(name text, aliases text[], description text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN to_tsvector('simple', name || ' ' || array_to_string(aliases, ' ') || ' ' || coalesce(description, ''));

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
    tsv            tsvector GENERATED ALWAYS AS (entity_words(name, aliases, description)) STORED,
    -- After tsv, where v3_from_v2.sql adds them to a v2 copy: both copies' rows read alike.
    merged_into    text,
    merged_at      timestamptz,
    merge_rule     text,
    kept_apart     text[]           NOT NULL DEFAULT '{}',
    PRIMARY KEY (tenant_id, entity_id)
);
-- @indexes: built after a bulk load
CREATE INDEX entities_tsv ON entities USING gin (tsv);
CREATE INDEX entities_type ON entities (tenant_id, entity_type);
-- A group's members, and whether a tenant has merges at all.
CREATE INDEX entities_merged_into ON entities (tenant_id, merged_into) WHERE merged_into IS NOT NULL;
-- The tenant's latest sighting: where pruning's recent window ends.
CREATE INDEX entities_last_seen ON entities (tenant_id, last_seen_at);
