-- entities v3 made from a live v2 copy in place (projectors/entities.upgrade_in_place):
-- v3 only adds the merge columns, which are empty for every event a v2 copy applied (it
-- knew no merge), and their indexes; so the copy equals one rebuilt as v3.
ALTER TABLE entities
    ADD COLUMN IF NOT EXISTS merged_into text,
    ADD COLUMN IF NOT EXISTS merged_at timestamptz,
    ADD COLUMN IF NOT EXISTS merge_rule text,
    ADD COLUMN IF NOT EXISTS kept_apart text[] NOT NULL DEFAULT '{}';
CREATE INDEX IF NOT EXISTS entities_merged_into ON entities (tenant_id, merged_into) WHERE merged_into IS NOT NULL;
CREATE INDEX IF NOT EXISTS entities_last_seen ON entities (tenant_id, last_seen_at);
